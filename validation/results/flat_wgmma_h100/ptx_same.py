"""Are the flat-grid kernels' sm_90 PTX the same in two checkouts (debug information
aside)? CPU only:

    git worktree add /tmp/before 8759a0d
    python3 validation/results/flat_wgmma_h100/ptx_same.py /tmp/before . > ptx_same.txt

Each checkout's compile cases (``tests/test_flat_grid.py``: FORWARD_CASES, COMPILE_CASES
of the wgrad kernel; ``tests/test_backward_grouped_flat.py``: COMPILE_CASES of the fused
kernel) are compiled in a child process that imports that checkout as ``convdispatch``
(the first checkout's case lists name the cases), and their PTX compared up to the
first ``.section .debug``, without ``.loc`` / ``.file`` lines, their ``$L__tmp`` labels
and comments (which name source files and lines).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The child's imports and its ``code`` (the PTX compared), before what it compiles.
CHILD_HEAD = """
import json, sys
sys.path.insert(0, sys.argv[1] + "/tests")
import test_backward_grouped_flat as B
import test_flat_grid as T

def code(ptx):
    # the sections before the debug ones, without source lines, their labels and comments
    ptx = ptx.split(".section\\t.debug")[0].split(".section .debug")[0]
    return "\\n".join(line for line in ptx.splitlines()
                     if ".loc" not in line and "$L__tmp" not in line and ".file" not in line
                     and not line.strip().startswith("//"))
"""
CHILD = CHILD_HEAD + """
out = {}
for i, case in enumerate(T.FORWARD_CASES):
    out[f"forward {i}"] = code(T.forward_ptx_sm90(*case)[0])
for i, case in enumerate(T.COMPILE_CASES):
    out[f"wgrad {i}"] = code(T.ptx_sm90(*case)[0])
for i in range(len(B.COMPILE_CASES)):
    out[f"fused backward {i}"] = code(B.ptx_sm90(i)[0])
json.dump(out, open(sys.argv[2], "w"))
"""


def compiled(checkout: Path) -> dict[str, str]:
    """Each compile case's PTX (code sections) in ``checkout``."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "convdispatch").symlink_to(checkout.resolve())
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        env["PYTHONPATH"] = tmp
        out = Path(tmp) / "ptx.json"
        subprocess.run([sys.executable, "-c", CHILD, str(checkout.resolve()), str(out)],
                       env=env, check=True, cwd=tmp)
        return json.loads(out.read_text())


def main() -> None:
    before, after = (compiled(Path(p)) for p in sys.argv[1:3])
    for case, ptx in before.items():
        print(f"{case}: {'same' if after.get(case) == ptx else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
