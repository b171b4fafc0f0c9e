"""SASS opcode counts and registers of ``grouped_flat_kernel`` for one problem and config,
compiled for sm_90 on a CPU machine (nvdisasm and cuobjdump from Triton's wheel), as a
channels_last launch specialises it (unit channel strides; pointers and pixel strides
16-byte aligned; the filter's other strides not).

    python3 validation/results/filter_burst_h100/flat_sass.py PROBLEM CONFIG [W_VEC]

W_VEC: the filter vector width (in the tree since the forty-fourth session; before it,
``filter_vectors_next.patch`` added it). Left out: the kernel's default, 1. The
disassembly is left in /tmp/flat_sass.sass.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)
# tests/test_flat_grid.py's constants of a forward compile (and its helpers' imports)
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "gpu"))

import test_flat_grid as T  # noqa: E402
import triton  # noqa: E402
from convdispatch.data.problems import problem_by_id  # noqa: E402
from convdispatch.kernels.base import Config  # noqa: E402
from convdispatch.kernels.dead_taps import trim_dead_taps  # noqa: E402
from convdispatch.kernels.grouped_flat import (  # noqa: E402
    filter_in_registers,
    flat_item,
    grouped_flat_kernel,
    row_reuse,
)
from sass_count import cuobjdump  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402


def main(argv: list[str]) -> None:
    geom = trim_dead_taps(problem_by_id(argv[0]).geom)
    cfg = Config.parse(argv[1])
    extra = {"W_VEC": int(argv[2])} if len(argv) > 2 else {}
    el = {"float16": "*fp16", "bfloat16": "*bf16"}[geom.dtype]
    pointers = dict.fromkeys(("x_ptr", "w_ptr", "out_ptr", "bias_ptr", "res_ptr"), el)
    cons = dict(CG=geom.cg, KG=geom.kg, GPT=T.FWD.gpt(geom, cfg), **T._plane_taps(geom),
                BLOCK=cfg["BLOCK_N"], ACT=0, HAS_BIAS=False, HAS_RES=False,
                TRANSPOSED=False, B_REGS=filter_in_registers(geom, cfg["BLOCK_N"]),
                REUSE=row_reuse(geom, cfg), syc=1, src=1, swc=1, **extra,
                **flat_item(geom, cfg))
    aligned = (*pointers, "syn", "syd", "syh", "syw", "sxn", "sxd", "sxh", "sxw", "srn",
               "srd", "srh", "srw", "C", "K")
    names = grouped_flat_kernel.arg_names
    sig = {n: pointers.get(n, "i32") for n in names} | dict.fromkeys(cons, "constexpr")
    src = GluonASTSource(grouped_flat_kernel, sig,
                         constexprs={(names.index(c),): v for c, v in cons.items()},
                         attrs={(names.index(n),): [["tt.divisibility", 16]] for n in aligned})
    out = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                         options={"num_warps": cfg["num_warps"]})
    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "nvdisasm"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(out.asm["cubin"])
        f.flush()
        sass = subprocess.run([str(tool), "-c", f.name], capture_output=True, text=True,
                              check=True).stdout
    Path("/tmp/flat_sass.sass").write_text(sass)
    ops = collections.Counter(re.findall(
        r"^\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_.]+)", sass, re.M))
    loads = {op: n for op, n in ops.items() if op.startswith("LDG.E")}
    regs = re.search(r"REG:(\d+)", cuobjdump(out.asm["cubin"], "-res-usage")).group(1)
    print(f"{argv[0]} {cfg}{' W_VEC=' + argv[2] if extra else ''}: "
          f"{sum(ops.values())} instructions, {regs} registers, shared memory "
          f"{out.metadata.shared} B; "
          f"global loads {loads}, barriers {ops['BAR.SYNC.DEFER_BLOCKING']}")


if __name__ == "__main__":
    main(sys.argv[1:])
