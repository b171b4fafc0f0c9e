"""Are grouped_flat's and the other flat-grid kernels' sm_90 PTX the same before and after
``diag_blocks`` (debug information aside)? CPU only:

    git worktree add /tmp/before 7bde3e7
    python3 validation/results/wide_tiles_h200/ptx_same.py /tmp/before . > ptx_same.txt

As ``../flat_wgmma_h100/ptx_same.py`` (whose ``compiled`` this reuses, with every compile
case list of ``tests/test_flat_grid.py`` of the first checkout: the mma.sync forward and
dgrad twin cases, the WGMMA, TMA and deep-buffer cases, the wgrad kernel's, and the fused
backward kernel's). Each case is named with whether the first checkout's launch took the
halves' diagonal blocks: those hold their filter tiles' blocks alone now, so their PTX
differs; every other case should be the same.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "flat_wgmma_h100"))
import ptx_same  # noqa: E402

ptx_same.CHILD = ptx_same.CHILD_HEAD + """
from convdispatch.kernels import grouped_flat as F

def halves(geom, cfg, transposed):
    rule = getattr(F, "half_blocks", None)
    return rule(geom, cfg, transposed) if rule else F.diag_blocks(geom, cfg, transposed) == 2

out = {}
lists = {"forward": T.FORWARD_CASES, "wgmma": T.WGMMA_CASES, "tma": T.TMA_CASES,
         "deep": T.DEEP_CASES}
for name, cases in lists.items():
    for i, case in enumerate(cases):
        geom, cfg, epilogue, transposed = case[:4]
        key = f"{name} {i} (halves: {'yes' if halves(geom, cfg, transposed) else 'no'})"
        out[key] = code(T.forward_ptx_sm90(*case)[0])
for i, case in enumerate(T.COMPILE_CASES):
    out[f"wgrad {i}"] = code(T.ptx_sm90(*case)[0])
for i in range(len(B.COMPILE_CASES)):
    out[f"fused backward {i}"] = code(B.ptx_sm90(i)[0])
json.dump(out, open(sys.argv[2], "w"))
"""


if __name__ == "__main__":
    ptx_same.main()
