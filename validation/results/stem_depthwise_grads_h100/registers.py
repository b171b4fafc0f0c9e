"""Registers and spills of wgrad_depthwise_taps (and wgrad_direct) compiled for sm_90a.

    python validation/results/stem_depthwise_grads_h100/registers.py

No GPU needed: each tile is compiled by Triton for sm_90 (fp16 pointers, float32
workspace, i32 scalars without divisibility hints, a 3x3 filter) and its PTX given to
the ptxas that ships with Triton, whose -v report is quoted.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile

import triton
import triton.language as tl
from convdispatch.kernels.grad_direct import wgrad_direct_kernel
from convdispatch.kernels.wgrad_depthwise_taps import TAPS_TILES, wgrad_depthwise_taps_kernel
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

PTXAS = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/ptxas")


def ptxas_report(kernel, const: dict, warps: int) -> tuple[str, str]:
    """(registers a thread, spill stores) of ``kernel`` with ``const`` for sm_90a."""
    sig = {n: "constexpr" if n in const else
           ("*fp32" if n == "ws_ptr" else "*fp16") if n.endswith("_ptr") else "i32"
           for n in kernel.arg_names}
    src = ASTSource(kernel, sig,
                    constexprs={(kernel.arg_names.index(a),): v for a, v in const.items()})
    ptx = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                         options=dict(num_warps=warps, num_stages=1)).asm["ptx"]
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(ptx)
    out = subprocess.run([PTXAS, "-arch=sm_90a", "-v", f.name, "-o", os.devnull],
                         capture_output=True, text=True, check=True).stderr
    os.unlink(f.name)
    return (re.search(r"Used (\d+) registers", out).group(1),
            re.search(r"(\d+) bytes spill stores", out).group(1))


def main() -> int:
    version = subprocess.run([PTXAS, "--version"], capture_output=True, text=True).stdout
    print(f"triton {triton.__version__}, {version.strip().splitlines()[-1]}; sm_90a; "
          "command: `python validation/results/stem_depthwise_grads_h100/registers.py`.\n")
    print("| kernel | BLOCK_M (pixels) | BLOCK_N (channels) | warps | registers | "
          "spill stores (bytes) |")
    print("|---" * 6 + "|")
    for bp, bc, warps in TAPS_TILES:
        regs, spill = ptxas_report(wgrad_depthwise_taps_kernel, dict(
            KT=1, KR=3, KS=3, TAPS_P2=16, BLOCK_P=bp, BLOCK_C=bc, SPLIT_K=64,
            ONE_PER_GROUP=True, ACC=tl.float32, INT64=False), warps)
        print(f"| wgrad_depthwise_taps | {bp} | {bc} | {warps} | {regs} | {spill} |")
    regs, spill = ptxas_report(wgrad_direct_kernel, dict(
        BLOCK_M=64, BLOCK_N=32, SPLIT_K=32, ACC=tl.float32, INT64=False), 4)
    print(f"| wgrad_direct (one tap) | 64 | 32 | 4 | {regs} | {spill} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
