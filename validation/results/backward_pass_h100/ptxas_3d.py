"""Registers and spills of the fused backward kernel in 3D, from Triton's own ptxas (CPU, no
GPU): ResNeXt3D-50 layer1.0 at batch 8 with items of 128 and 256 positions, and the strided
layer2.0 with 64, as tests/test_backward_grouped_flat.py compiles them for sm_90.

    cd validation/results/backward_pass_h100
    PYTHONPATH=<a folder holding convdispatch> python3 ptxas_3d.py > ptxas_3d.txt
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "0"
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))

import test_backward_grouped_flat as T  # noqa: E402
import triton  # noqa: E402
from helpers import gluon_geom as G  # noqa: E402

G3 = dict(dims=3, t=3, r=3, s=3, pad=(1, 1, 1))
CASES = {
    "layer1.0/n8, 128 positions": (G(n=8, c=128, k=128, g=32, d=8, h=28, w=28, **G3), 128),
    "layer1.0/n8, 256 positions": (G(n=8, c=128, k=128, g=32, d=8, h=28, w=28, **G3), 256),
    "layer2.0/n8 (stride 2), 64 positions": (
        G(n=8, c=256, k=256, g=32, d=8, h=28, w=28, stride=(2, 2, 2), **G3), 64),
}


def main() -> None:
    ptxas = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    version = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    print(f"triton {triton.__version__}; {version.strip().splitlines()[-1]}; sm_90a\n")
    for name, (geom, positions) in CASES.items():
        T.COMPILE_CASES.append((geom, T.cfg_of(positions, 16)))
        ptx, shared = T.ptx_sm90(len(T.COMPILE_CASES) - 1)
        with tempfile.TemporaryDirectory() as d:
            src = Path(d) / "k.ptx"
            src.write_text(ptx)
            out = subprocess.run([ptxas, "-arch=sm_90a", "-v", src, "-o", Path(d) / "k.cubin"],
                                 capture_output=True, text=True).stderr
        regs = re.search(r"Used (\d+) registers", out).group(1)
        spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", out)
        print(f"{name}: {regs} registers, spill stores {spill.group(1)} B, loads "
              f"{spill.group(2)} B, shared {shared} B")


if __name__ == "__main__":
    main()
