"""Instruction mix and registers of the FMA and row-reuse kernels' SASS for sm_90,
compiled here (no GPU).

    python3 validation/gpu/sass_count.py depthwise TILE_H TILE_W BLOCK_N NUM_WARPS
    python3 validation/gpu/sass_count.py depthwise_rows ROWS TILE_W BLOCK_N NUM_WARPS [STRIDE]
    python3 validation/gpu/sass_count.py grouped_rows ROWS TILE_W BLOCK_N NUM_WARPS CG [STRIDE]
    python3 validation/gpu/sass_count.py depthwise_span ROWS 1 BLOCK NUM_WARPS K [STRIDE]

(grouped_rows: CG input and output channels a group.)

Compiles the kernel for a 3x3 fp16 depthwise layer with the run-time
specialisation of a channels_last launch (unit channel strides, 16-divisible
pixel strides, weight strides (9, 1, 3, 1)), disassembles it with the
``cuobjdump`` that Triton's wheel carries and prints the instruction count per
output, registers, spills and the most frequent opcodes. Neither kernel loops,
so the static count is what each thread executes.
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import triton
from convdispatch.kernels.base import next_pow2
from convdispatch.kernels.depthwise import depthwise_kernel
from convdispatch.kernels.depthwise_rows import depthwise_rows_kernel
from convdispatch.kernels.depthwise_span import depthwise_span_kernel
from convdispatch.kernels.grouped_rows import grouped_rows_kernel
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

DIVISIBLE = ("KTOT", "C", "K", "sxn", "sxd", "sxh", "sxw", "syn", "syd", "syh", "syw", "srn",
             "srd", "srh", "srw")


def compile_kernel(kernel, const: dict, warps: int, stages: int = 1):
    names = kernel.arg_names
    sig = {n: "constexpr" if n in const else "*fp16" if n.endswith("_ptr") else "i32"
           for n in names}
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in names
             if n.endswith("_ptr") or n in DIVISIBLE}
    src = ASTSource(kernel, sig,
                    constexprs={(names.index(k),): v for k, v in const.items()}, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32),
                          options=dict(num_warps=warps, num_stages=stages))


def cuobjdump(cubin: bytes, flag: str) -> str:
    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([str(tool), flag, f.name], capture_output=True, text=True,
                              check=True).stdout


def opcodes(cubin: bytes) -> collections.Counter:
    sass = cuobjdump(cubin, "-sass")
    ops = re.findall(r"^\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P[0-9T] )?([A-Z0-9_.]+)", sass, re.M)
    return collections.Counter(ops)


def registers(cubin: bytes) -> str:
    found = re.search(r"REG:(\d+)", cuobjdump(cubin, "-res-usage"))
    return found.group(1) if found else "?"


def main(argv: list[str]) -> int:
    family, *vals = argv
    th, tw, bn, warps, *rest = (int(v) for v in vals)
    common = dict(syc=1, src=1, sws=1, MULT=1, KR=3, KS=3, TILE_W=tw, BLOCK_N=bn, ACT=0,
                  HAS_BIAS=False, HAS_RES=False, INT64=False)
    if family == "depthwise":
        kernel = depthwise_kernel
        const = dict(common, sxc=1, KT=1, TILE_H=th)
    elif family == "depthwise_span":
        kernel = depthwise_span_kernel
        k, *rest = rest
        const = dict(common, sxc=1, KTOT=k, ROWS=th, BLOCK=bn, SH=rest[0] if rest else 1, DH=1)
        del const["TILE_W"], const["BLOCK_N"]
    elif family == "depthwise_rows":
        kernel = depthwise_rows_kernel
        const = dict(common, sxc=1, ROWS=th, SH=rest[0] if rest else 1, DH=1)
    else:
        kernel = grouped_rows_kernel
        cg, *rest = rest
        gpt = bn // cg
        del common["MULT"]
        const = dict(common, sxc=1, CG=cg, KG=cg, GPT=gpt, ROWS=th,
                     SH=rest[0] if rest else 1, DH=1, BLOCK_K=max(16, next_pow2(gpt * cg)),
                     PREC="ieee", UPCAST=False)
    compiled = compile_kernel(kernel, const, warps)
    ops = opcodes(compiled.asm["cubin"])
    outputs = th * tw * bn // (32 * warps)
    total = sum(ops.values())
    print(f"{family} {th}x{tw} pixels x {bn} channels, {warps} warps: {total} instructions, "
          f"{outputs} outputs a thread, {total / outputs:.1f} per output, "
          f"{registers(compiled.asm['cubin'])} registers")
    print("  " + ", ".join(f"{op} {n}" for op, n in ops.most_common(12)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
