"""Registers and spills of the grouped_flat tiles this folder's README quotes, from Triton's
bundled ptxas (no GPU needed) into ptxas_registers.txt.

    python3 validation/results/flat_buffers_h200/ptxas_registers.py

Each tile is compiled for sm_90 as ``tests/test_flat_grid.py`` compiles it, with its input
buffers and half blocks forced (the rules would not give some of these variants).
ptxas_registers.txt is this script's output at 7bde3e7, where the half blocks' filter tiles
were held whole in shared memory (since, ``diag_blocks`` holds the blocks alone).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[2] / "tests"))
os.environ.pop("TRITON_INTERPRET", None)

import test_flat_grid as T  # noqa: E402
import triton  # noqa: E402
from convdispatch.kernels.base import Config  # noqa: E402
from convdispatch.kernels.grouped_flat import copies_per_thread  # noqa: E402

G = T.G
L20 = G(n=32, c=256, k=256, g=32, h=56, w=56, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1))
L10 = G(n=32, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1))
L21 = G(n=32, c=256, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1))
L30 = G(n=32, c=512, k=512, g=32, h=28, w=28, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1))
V20 = G(n=8, c=256, k=256, g=32, d=8, h=28, w=28, t=3, r=3, s=3, stride=(2, 2, 2),
        pad=(1, 1, 1), dims=3)
# (name, geometry, BLOCK_M, ITEMS, num_warps, buffers, half blocks): the spills of more
# buffers and of the half blocks on ResNeXt-50 layer2.0's shipped tile, and the tiles of
# 12 or fewer copies a thread that take the half blocks
TILES = [("ResNeXt-50 layer2.0", L20, 128, 14, nw, bufs, halves)
         for nw in (4, 8) for bufs, halves in ((2, False), (3, False), (2, True))]
TILES += [("ResNeXt-50 layer1.0", L10, 128, 14, 4, 2, halves) for halves in (False, True)]
TILES += [(name, geom, bm, items, 4, 2, True)
          for name, geom, bm, items in (("ResNeXt-50 layer2.1", L21, 128, 8),
                                        ("ResNeXt-50 layer3.0", L30, 64, 8),
                                        ("ResNeXt3D-50 layer2.0 n8", V20, 64, 4))]


# ptxas runs a PTX file: the same file has come back with registers 240 to 248 from one run
# to the next, so each tile reports the range.
RUNS = 5


def ptxas_line(ptx: str) -> str:
    exe = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    regs, spills = [], []
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        for _ in range(RUNS):
            out = subprocess.run([str(exe), "-arch=sm_90a", "-v", str(src), "-o",
                                  str(Path(tmp) / "k.cubin")], capture_output=True, text=True)
            text = out.stdout + out.stderr
            regs.append(int(re.search(r"Used (\d+) registers", text).group(1)))
            spills.append(int(re.search(r"(\d+) bytes spill stores", text).group(1)))
    return (f"{min(regs)}-{max(regs)} registers, {min(spills)}-{max(spills)} bytes of spill "
            f"stores ({RUNS} ptxas runs)")


def main() -> None:
    lines = [f"triton {triton.__version__}, ptxas of its nvidia backend, sm_90a; "
             "command: python3 validation/results/flat_buffers_h200/ptxas_registers.py", ""]
    for name, geom, bm, items, nw, bufs, halves in TILES:
        cfg = Config(BLOCK_M=bm, BLOCK_N=32, ITEMS=items, num_warps=nw, num_stages=1, WGMMA=1)
        T.diag_blocks = lambda g, c, t, h=halves: 2 if h else 1
        ptx, _ = T.forward_ptx_sm90(geom, cfg, False, False, bufs)
        lines.append(f"{name}, {bm} x 32, {nw} warps, ITEMS={items}, cp.async "
                     f"({copies_per_thread(geom, cfg)} copies a thread a step), {bufs} "
                     f"buffers, half blocks {'on' if halves else 'off'}: {ptxas_line(ptx)}")
    (HERE / "ptxas_registers.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
