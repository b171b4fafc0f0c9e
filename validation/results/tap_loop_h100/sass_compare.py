"""Instructions and registers of igemm_kernel and packed_kernel compiled for sm_90 here
(no GPU), as a channels_last fp16 launch specialises them.

    python validation/results/tap_loop_h100/sass_compare.py

Runs at any checkout (HAS_DEPTH is passed only to kernels that take it), so the same
command at 6e6fd5d gives the counts before the tap-loop change. Static counts: the
whole kernel, prologue and epilogue included.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "gpu"))

import sass_count  # noqa: E402
from convdispatch.kernels.grouped_packed import packed_kernel  # noqa: E402
from convdispatch.kernels.implicit_gemm import igemm_kernel  # noqa: E402

# A real launch proves channel counts and weight strides 16-divisible (CG=64, KG=64).
sass_count.DIVISIBLE = (*sass_count.DIVISIBLE, "CG", "KG", "swk")
COMMON = dict(sxc=1, syc=1, src=1, swc=1, ACT=0, HAS_BIAS=False, HAS_RES=False, PREC="ieee",
              UPCAST=False, INT64=False, EVEN_C=True)
CASES = [
    ("packed_kernel 128x32x32, 4 warps, 4 stages (cg=8)", packed_kernel, 4, 4,
     dict(COMMON, CG=8, KG=8, GPT=4, BLOCK_M=128, BLOCK_N=32, BLOCK_K=32, TILE_W=0, L1_VEC=0,
          SPLIT_K=1)),
] + [
    (f"igemm_kernel {bm}x{bn}x{bk}, {w} warps, {st} stages", igemm_kernel, w, st,
     dict(COMMON, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, SPLIT_K=1))
    for bm, bn, bk, w, st in [(64, 64, 64, 4, 3), (128, 64, 64, 4, 4), (128, 128, 64, 8, 3),
                              (128, 128, 32, 4, 4)]
]


def main() -> int:
    for name, kernel, warps, stages, const in CASES:
        if "HAS_DEPTH" in kernel.arg_names:
            const = dict(const, HAS_DEPTH=False)
        cubin = sass_count.compile_kernel(kernel, const, warps, stages).asm["cubin"]
        ops = sass_count.opcodes(cubin)
        print(f"{name}: {sum(ops.values())} instructions, "
              f"{sass_count.registers(cubin)} registers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
