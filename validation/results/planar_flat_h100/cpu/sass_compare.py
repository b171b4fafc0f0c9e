"""The 16-channel flat wgrad kernel's SASS with its rows whole (shipped) and in planes of 8
channels, compiled for sm_90 on the CPU (no GPU): instruction counts by opcode.

    cd validation/results/planar_flat_h100/cpu && python sass_compare.py > sass_compare.md

Each variant compiles in a child process with its own Triton cache; ``planes`` swaps in
the planar layout as ``validation/gpu/profile_flat_planes.py`` does. The case is
``tests/test_flat_grid.py``'s 4-channel groups on a 56-wide map (BLOCK_N 16).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]

CHILD = r"""
import collections, re, subprocess, sys, tempfile
sys.path.insert(0, sys.argv[1] + "/tests")
sys.path.insert(0, sys.argv[1] + "/validation/gpu")
import triton
if sys.argv[2] == "planes":
    import profile_flat_planes as P
    from convdispatch.kernels import flat_grid, wgrad_grouped_flat
    for mod in (flat_grid, wgrad_grouped_flat):
        mod.row_units, mod.row_layout = P.planes_units, P.planes_layout
_compile = triton.compile
cubin = {}
def keep(*a, **k):
    out = _compile(*a, **k)
    cubin["c"] = out.asm["cubin"]
    return out
triton.compile = keep
import test_flat_grid as T
T.ptx_sm90(*T.COMPILE_CASES[2])
f = tempfile.NamedTemporaryFile(suffix=".cubin", delete=False)
f.write(cubin["c"]); f.close()
tool = triton.__path__[0] + "/backends/nvidia/bin/cuobjdump"
sass = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True).stdout
ops = re.findall(r"^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", sass, re.M)
c = collections.Counter(o.split(".")[0] for o in ops)
print(sum(c.values()), ";".join(f"{k}={v}" for k, v in sorted(c.items())))
"""


def counts(variant: str) -> tuple[int, dict]:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), variant], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    return int(out[-2]), dict(kv.split("=") for kv in out[-1].split(";"))


if __name__ == "__main__":
    import triton

    rows, planes = counts("rows"), counts("planes")
    print(f"triton {triton.__version__}, compiled for sm_90 on the CPU; command: "
          "`python sass_compare.py`\n")
    print("| opcode | rows whole (shipped) | planes of 8 |\n|---|---|---|")
    print(f"| all | {rows[0]} | {planes[0]} |")
    for op in sorted(set(rows[1]) | set(planes[1]), key=lambda o: -int(rows[1].get(o, 0))):
        a, b = rows[1].get(op, "0"), planes[1].get(op, "0")
        print(f"| {op} | {a} | {b} |")
