"""Does Gluon's PaddedSharedLayout lower for NVIDIA on this Triton? Three tiny kernels,
compiled for sm_90 on the CPU (no GPU), each in its own process (a failed lowering aborts
the process): cp.async into a padded [64, 16] buffer, then a plain load of a slice, an
ldmatrix dot-operand load of a slice, or of a view indexed at any row.

    cd validation/results/planar_flat_h100/cpu && python padded_layout.py > padded_layout.md
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

CHILD = r"""
import sys
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp
from triton.experimental.gluon.language.nvidia.ampere import mma_v2


@gluon.jit
def k(x_ptr, y_ptr, MODE: gl.constexpr):
    LX: gl.constexpr = gl.BlockedLayout([1, 8], [16, 2], [2, 1], [1, 0])
    MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[1, 2],
                                                  instr_shape=[16, 8])
    A_L: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=MMA, k_width=2)
    B_L: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=MMA, k_width=2)
    PAD: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[16, 8]], [64, 16], [1, 0])
    x_smem = gl.allocate_shared_memory(gl.float16, [64, 16], PAD)
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, LX))
    c = gl.arange(0, 16, layout=gl.SliceLayout(0, LX))
    cp.async_copy_global_to_shared(x_smem, x_ptr + gl.expand_dims(r, 1) * 16
                                   + gl.expand_dims(c, 0))
    cp.commit_group()
    cp.wait_group(0)
    gl.thread_barrier()
    i = gl.arange(0, 16, layout=gl.SliceLayout(1, MMA))
    j = gl.arange(0, 16, layout=gl.SliceLayout(0, MMA))
    if MODE == 0:
        v = x_smem.slice(16, 16).load(LX)
        gl.store(y_ptr + gl.expand_dims(gl.arange(0, 16, layout=gl.SliceLayout(1, LX)), 1)
                 * 16 + gl.expand_dims(c, 0), v.to(gl.float32))
    else:
        if MODE == 1:
            b = x_smem.slice(16, 16).load(B_L)
        else:
            rows = x_smem._reinterpret(gl.float16, [64, 16], gl.PaddedSharedLayout
                                       .with_identity_for([[16, 8]], [16], [0]))
            b = rows.index(3)._reinterpret(gl.float16, [16, 16], gl.PaddedSharedLayout
                                           .with_identity_for([[16, 8]], [16, 16], [1, 0])
                                           ).load(B_L)
        acc = mma_v2(gl.full([16, 16], 1.0, gl.float16, A_L), b,
                     gl.zeros([16, 16], gl.float32, MMA))
        gl.store(y_ptr + gl.expand_dims(i, 1) * 16 + gl.expand_dims(j, 0), acc)


mode = int(sys.argv[1])
sig = {"x_ptr": "*fp16", "y_ptr": "*fp32", "MODE": "constexpr"}
src = GluonASTSource(k, sig, constexprs={(2,): mode},
                     attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})
triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 2})
print("compiled")
"""

CASES = ("a plain load of a slice", "an ldmatrix load of a slice",
         "an ldmatrix load of a view indexed at row 3")


if __name__ == "__main__":
    import triton

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    print(f"triton {triton.__version__}, compiled for sm_90 on the CPU; command: "
          "`python padded_layout.py`\n")
    print("| after cp.async into a padded buffer | result |\n|---|---|")
    child = os.path.join(tempfile.mkdtemp(), "padded_child.py")  # gluon.jit reads source
    with open(child, "w") as f:
        f.write(CHILD)
    for mode, what in enumerate(CASES):
        env["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
        done = subprocess.run([sys.executable, child, str(mode)], env=env,
                              capture_output=True, text=True)
        if done.returncode == 0:
            got = "compiled"
        else:
            tail = [ln for ln in done.stderr.splitlines() if "Assertion" in ln or "Error" in ln]
            got = f"failed (exit {done.returncode}): " + (tail[0][-120:] if tail else "?")
        print(f"| {what} | {got} |")
