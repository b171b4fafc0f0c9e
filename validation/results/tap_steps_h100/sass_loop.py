"""grouped_packed's single-tap kernel compiled for sm_90 here (no GPU): instructions in all
and in its main loop (between its first two branches), with a hash of the loop's opcodes
and operands (register numbers, parameter offsets and branch targets dropped), for a
channels_last fp16 launch of a 3D layer (8 channels a group, 128x32x32 tile, 4 warps, 4
stages, bias and ReLU).

    python3 validation/results/tap_steps_h100/sass_loop.py

Run at two checkouts to compare them (``sass_loop_before.txt``: 5f94b4d, the start of
the fortieth session; ``sass_loop_after.txt``: after the tap steps).
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "gpu"))
from convdispatch.kernels.grouped_packed import packed_kernel  # noqa: E402
from sass_count import compile_kernel, cuobjdump  # noqa: E402

CONST = dict(sxc=1, syc=1, src=1, swc=1, CG=8, KG=8, GPT=4, BLOCK_M=128, BLOCK_N=32,
             BLOCK_K=32, TILE_W=0, EVEN_C=True, HAS_DEPTH=True, ACT=1, HAS_BIAS=True,
             HAS_RES=False, PREC="ieee", UPCAST=False, INT64=False, SPLIT_K=1, L1_VEC=0,
             TRANSPOSED=False, W_VEC=8)


def main() -> None:
    const = dict(CONST, **({"TAPS": 1} if "TAPS" in packed_kernel.arg_names else {}))
    sass = cuobjdump(compile_kernel(packed_kernel, const, 4, 4).asm["cubin"], "-sass")
    # (Register numbers, kernel-parameter offsets and branch targets dropped: a new
    # parameter moves the offsets, a longer prologue the targets.)
    ops = [re.sub(r"BRA 0x[0-9a-f]+", "BRA target",
                  re.sub(r"c\[0x0\]\[0x[0-9a-f]+\]", "c[param]",
                         re.sub(r"\bU?[RP]\d+\b", "R", m.group(1))))
           for m in (re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?);", line) for line in sass.splitlines())
           if m]
    branches = [i for i, op in enumerate(ops) if "BRA" in op]
    loop = ops[branches[0]:branches[1] + 1]
    print(f"instructions: {len(ops)}")
    print(f"main loop: {len(loop)} instructions, "
          f"md5 {hashlib.md5(chr(10).join(loop).encode()).hexdigest()}")


if __name__ == "__main__":
    main()
