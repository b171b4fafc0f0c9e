"""Registers of wgrad_depthwise_rows' and wgrad_grouped_taps' tiles on sm_90a (no GPU).

    python validation/results/depthwise_wgrad_rows_h100/registers.py > registers.md

Each tile of the family's space is compiled by Triton for sm_90 with the run-time
specialisation of a channels_last fp16 launch (unit channel strides, 16-divisible pixel
strides; ``validation/gpu/sass_count.compile_kernel``), a 3x3 depthwise filter, split,
at vertical stride 1 and 2 (``wgrad_grouped_taps``: 8 channels a group, 4 groups a
pack); the register count and spill stores are the ones ``cuobjdump`` reports.
"""

from __future__ import annotations

import sys
from pathlib import Path

import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "gpu"))
import sass_count  # noqa: E402
from convdispatch.kernels.wgrad_depthwise_rows import (  # noqa: E402
    ROWS_TILES,
    wgrad_depthwise_rows_kernel,
)
from convdispatch.kernels.wgrad_grouped_taps import (  # noqa: E402
    TAPS_TILES,
    wgrad_grouped_taps_kernel,
)


def spill_stores(cubin: bytes) -> int:
    return sass_count.opcodes(cubin).get("STL", 0)


def main() -> int:
    sass_count.DIVISIBLE = (*sass_count.DIVISIBLE, "WS_STRIDE", "CTOT")
    print(f"triton {triton.__version__}; sm_90a; command: "
          "`python validation/results/depthwise_wgrad_rows_h100/registers.py`.\n")
    print("| ROWS | TILE_W | BLOCK_N | warps | values a thread | registers (stride 1) | "
          "registers (stride 2) |")
    print("|---" * 7 + "|")
    for rows, tw, bn, warps in ROWS_TILES:
        regs = []
        for sh in (1, 2):
            const = dict(syc=1, sxc=1, MULT=1, KT=1, KR=3, KS=3, SH=sh, DH=1, ROWS=rows,
                         TILE_W=tw, BLOCK_N=bn, SPLIT=True, ACC=tl.float32, INT64=False)
            compiled = sass_count.compile_kernel(wgrad_depthwise_rows_kernel, const, warps)
            regs.append(sass_count.registers(compiled.asm["cubin"]))
        print(f"| {rows} | {tw} | {bn} | {warps} | {tw * bn // (32 * warps)} | {regs[0]} | "
              f"{regs[1]} |")
    print("\n`wgrad_grouped_taps` (3x3, 8 channels a group, stride 1):\n")
    print("| BLOCK_N | ROWS | TILE_W | warps | registers | spill stores |")
    print("|---" * 6 + "|")
    for bn, rows, tw, warps in TAPS_TILES:
        const = dict(syc=1, sxc=1, CG=8, KG=8, GPT=bn // 8, KR=3, KS=3, KS_P2=4, ROWS=rows,
                     TILE_W=tw, BLOCK=bn, SPLIT=True, PREC="ieee", UPCAST=False,
                     ACC=tl.float32, INT64=False)
        cubin = sass_count.compile_kernel(wgrad_grouped_taps_kernel, const, warps).asm["cubin"]
        print(f"| {bn} | {rows} | {tw} | {warps} | {sass_count.registers(cubin)} | "
              f"{spill_stores(cubin)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
