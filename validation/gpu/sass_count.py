"""Instruction mix of the depthwise kernel's SASS for sm_90, compiled here (no GPU).

    python3 validation/gpu/sass_count.py TILE_H TILE_W BLOCK_N NUM_WARPS

Compiles ``depthwise_kernel`` for a 3x3 fp16 depthwise layer with the run-time
specialisation of a channels_last launch (unit channel strides, 16-divisible
pixel strides, weight strides (9, 1, 3, 1)), disassembles it with the
``cuobjdump`` that Triton's wheel carries and prints the instruction count and the
most frequent opcodes.
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import triton
from convdispatch.kernels.depthwise import depthwise_kernel
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

DIVISIBLE = ("KTOT", "sxn", "sxd", "sxh", "sxw", "syn", "syd", "syh", "syw", "srn", "srd", "srh",
             "srw")


def compile_depthwise(tile_h: int, tile_w: int, block_n: int, warps: int):
    names = depthwise_kernel.arg_names
    const = dict(sxc=1, syc=1, src=1, sws=1, MULT=1, KT=1, KR=3, KS=3, TILE_H=tile_h,
                 TILE_W=tile_w, BLOCK_N=block_n, ACT=0, HAS_BIAS=False, HAS_RES=False,
                 INT64=False)
    sig = {n: "constexpr" if n in const else "*fp16" if n.endswith("_ptr") else "i32"
           for n in names}
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in names
             if n.endswith("_ptr") or n in DIVISIBLE}
    src = ASTSource(depthwise_kernel, sig,
                    constexprs={(names.index(k),): v for k, v in const.items()}, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32),
                          options=dict(num_warps=warps, num_stages=1))


def opcodes(cubin: bytes) -> collections.Counter:
    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        sass = subprocess.run([str(tool), "-sass", f.name], capture_output=True, text=True,
                              check=True).stdout
    ops = re.findall(r"^\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P[0-9T] )?([A-Z0-9_.]+)", sass, re.M)
    return collections.Counter(ops)


def main(argv: list[str]) -> int:
    th, tw, bn, warps = (int(v) for v in argv)
    ops = opcodes(compile_depthwise(th, tw, bn, warps).asm["cubin"])
    outputs = th * tw * bn // (32 * warps)
    total = sum(ops.values())
    print(f"depthwise {th}x{tw} pixels x {bn} channels, {warps} warps: {total} instructions, "
          f"{outputs} outputs a thread, {total / outputs:.0f} per output")
    print("  " + ", ".join(f"{op} {n}" for op, n in ops.most_common(12)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
