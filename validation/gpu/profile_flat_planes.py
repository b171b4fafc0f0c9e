"""One wgrad_grouped_flat launch for Nsight Compute, its 16-channel rows whole or in planes.

    ncu --profile-from-start off ... python3 validation/gpu/profile_flat_planes.py \
        rows|planes PROBLEM_ID CANDIDATE_ID

``flat_grid.row_layout`` keeps 16-channel rows whole because in planes of 8 channels
their kernels were 7% slower (call 168) with the same SASS but for address offsets. With
``planes`` this process swaps in the planar layout for every row width before anything
compiles, then profiles like ``profile_grad.py``.
"""

from __future__ import annotations

import math
import sys

import profile_grad
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.constexpr_function
def planes_units(block):
    return 1


@gluon.constexpr_function
def planes_layout(rows, block, plane_rows):
    bases = [[0, 1], [0, 2], [0, 4]]
    bases += [[1 << i, 0] for i in range(int(math.log2(rows)))]
    bases += [[0, 0]] * (int(math.log2(plane_rows)) - int(math.log2(rows)))
    bases += [[0, 8 << i] for i in range(int(math.log2(block // 8)))]
    return gl.SharedLinearLayout(bases)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in ("rows", "planes"):
        raise SystemExit(__doc__)
    if argv[0] == "planes":
        from convdispatch.kernels import flat_grid, wgrad_grouped_flat

        for mod in (flat_grid, wgrad_grouped_flat):
            mod.row_units, mod.row_layout = planes_units, planes_layout
    return profile_grad.main([argv[1], "wgrad", argv[2]])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
