"""Registers and spills of grouped_flat's 64-wide WGMMA tiles, from Triton's bundled ptxas
(no GPU needed) into ptxas_registers.txt: the counts ``grouped_flat.wide_rejects`` quotes.

    python3 validation/results/wide_tiles_h200/ptxas_registers.py

Each tile is compiled for sm_90 as ``tests/test_flat_grid.py`` compiles it (ITEMS=4,
without the epilogue), whether or not the family offers it; ResNeXt-50 layer4.x's
32-channel groups with two diagonal blocks of 32 (``diag_blocks`` as call 310 ran it).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[2] / "tests"))
sys.path.insert(0, str(HERE.parent / "flat_buffers_h200"))
os.environ.pop("TRITON_INTERPRET", None)

import test_flat_grid as T  # noqa: E402
import triton  # noqa: E402
from convdispatch.kernels.base import Config  # noqa: E402
from convdispatch.kernels.grouped_flat import copies_per_thread, diag_blocks  # noqa: E402
from ptxas_registers import ptxas_line  # noqa: E402

G = T.G
LAYERS = {
    "ResNeXt-50 layer1.0": G(n=32, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1)),
    "ResNeXt-50 layer2.1": G(n=32, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1)),
    "ResNeXt-50 layer2.0": G(n=32, c=256, k=256, g=32, h=56, w=56, r=3, s=3, stride=(1, 2, 2),
                             pad=(0, 1, 1)),
    "ResNeXt-50 layer3.0": G(n=32, c=512, k=512, g=32, h=28, w=28, r=3, s=3, stride=(1, 2, 2),
                             pad=(0, 1, 1)),
    "ResNeXt-50 layer4.0": G(n=32, c=1024, k=1024, g=32, h=14, w=14, r=3, s=3,
                             stride=(1, 2, 2), pad=(0, 1, 1)),
    "ResNeXt-50 layer4.1": G(n=32, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
}
# (layer, BLOCK_M, num_warps, TMA): a warpgroup's positions on the stride-1 layers; the
# offered tiles on the strided ones; the 32-channel groups at 4 warps
TILES = [(name, bm, nw, 0) for name in ("ResNeXt-50 layer1.0", "ResNeXt-50 layer2.1")
         for bm, nw in ((64, 4), (128, 4), (128, 8), (256, 8))]
TILES += [(name, bm, nw, tma) for name in ("ResNeXt-50 layer2.0", "ResNeXt-50 layer3.0")
          for bm, nw in ((64, 4), (128, 8)) for tma in (0, 1)]
TILES += [(name, 64, 4, tma) for name in ("ResNeXt-50 layer4.0", "ResNeXt-50 layer4.1")
          for tma in (0, 1)]


def main() -> None:
    lines = [f"triton {triton.__version__}, ptxas of its nvidia backend, sm_90a; "
             "command: python3 validation/results/wide_tiles_h200/ptxas_registers.py", ""]
    for name, bm, nw, tma in TILES:
        geom = LAYERS[name]
        cfg = Config(BLOCK_M=bm, BLOCK_N=64, ITEMS=4, num_warps=nw, num_stages=1, WGMMA=1,
                     **({"TMA": 1} if tma else {}))
        blocks = diag_blocks(geom, cfg, False)
        if blocks == 1:  # 32-channel groups: two blocks of 32, as call 310 ran them
            blocks = 2
            T.diag_blocks = lambda g, c, t: 2
        ptx, _ = T.forward_ptx_sm90(geom, cfg, False, False)
        T.diag_blocks = diag_blocks
        copies = (f"cp.async ({copies_per_thread(geom, cfg)} copies a thread a step)"
                  if not tma else "TMA")
        lines.append(f"{name}, {bm} x 64, {nw} warps, {blocks} diagonal blocks, {copies}: "
                     f"{ptxas_line(ptx)}")
        print(lines[-1], flush=True)
    (HERE / "ptxas_registers.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
