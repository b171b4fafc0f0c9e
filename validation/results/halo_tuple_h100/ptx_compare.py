"""sm_90 PTX of wgrad_grouped_halo at two commits, compared instruction by instruction.

    python validation/results/halo_tuple_h100/ptx_compare.py [OLD_REV] > ptx_compare.md

Compiles the kernel of the working tree and of OLD_REV (default 201c1c0, before the
tuple accumulators) for five configs with tests/test_halo_wgrad.py's ``ptx_sm90``
(Triton's ptxas, no GPU), and reports each kernel body's instruction count and the lines
that differ once register names are dropped.
"""

from __future__ import annotations

import difflib
import importlib
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))

import convdispatch.kernels.wgrad_grouped_halo as halo  # noqa: E402
import test_halo_wgrad as t  # noqa: E402
from convdispatch.kernels.base import Config  # noqa: E402

G = t.G
CASES = [
    (G(n=2, c=64, k=64, g=4, h=14, w=14, r=3, s=3, pad=(0, 1, 1)),
     Config(BLOCK_M=128, TILE_W=16, BLOCK_N=16, SPLIT_K=8, num_warps=2, num_stages=2)),
    (G(n=2, c=64, k=64, g=16, h=28, w=28, r=3, s=3, pad=(0, 1, 1), dtype="bfloat16"),
     Config(BLOCK_M=64, TILE_W=32, BLOCK_N=16, SPLIT_K=1, num_warps=2, num_stages=2)),
    (G(n=2, c=128, k=128, g=4, h=14, w=14, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
     Config(BLOCK_M=64, TILE_W=16, BLOCK_N=32, SPLIT_K=4, num_warps=4, num_stages=2)),
    (G(n=2, c=64, k=64, g=16, h=14, w=14, r=3, s=1, pad=(0, 1, 0)),
     Config(BLOCK_M=64, TILE_W=16, BLOCK_N=16, SPLIT_K=1, num_warps=2, num_stages=2)),
    (G(n=2, c=64, k=64, g=16, h=14, w=14, r=1, s=2),
     Config(BLOCK_M=64, TILE_W=16, BLOCK_N=16, SPLIT_K=4, num_warps=2, num_stages=2)),
]


def body(ptx: str) -> list[str]:
    """The kernel's instructions, register names dropped."""
    a = ptx.index(".entry")
    b = ptx.find(".section", a)
    lines = [ln.strip() for ln in ptx[a:b if b > 0 else None].splitlines()]
    return [re.sub(r"%[a-z]+\d*", "%", ln) for ln in lines
            if ln and not ln.startswith(("//", ".loc", "$L__tmp"))]


def bodies() -> list[list[str]]:
    return [body(t.ptx_sm90(g, c)[0]) for g, c in CASES]


def main(argv: list[str]) -> int:
    old_rev = argv[0] if argv else "201c1c0"
    new = bodies()
    src = subprocess.run(["git", "-C", str(ROOT), "show",
                          f"{old_rev}:kernels/wgrad_grouped_halo.py"],
                         check=True, capture_output=True, text=True).stdout
    path = Path(halo.__file__)
    now = path.read_text()
    try:
        path.write_text(src)
        importlib.reload(halo)
        old = bodies()
    finally:
        path.write_text(now)
        importlib.reload(halo)
    print(f"# wgrad_grouped_halo's sm_90 PTX: {old_rev} against the working tree\n")
    print("| config | instructions (old / new) | mma.sync | the same instructions, in any "
          "order | lines in another place |")
    print("|---|---|---|---|---|")
    for (g, c), o, n in zip(CASES, old, new):
        diff = [ln for ln in difflib.unified_diff(o, n, lineterm="", n=0)
                if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
        print(f"| {g.describe()} {c} | {len(o)} / {len(n)} | "
              f"{sum('mma.sync' in ln for ln in n)} | "
              f"{'yes' if sorted(o) == sorted(n) else 'no'} | {len(diff) // 2} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
