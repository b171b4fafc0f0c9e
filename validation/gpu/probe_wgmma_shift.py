"""Does wgmma read a row-shifted view of a swizzled shared buffer correctly (Triton's
descriptor from the view's address, the data swizzled by the buffer's own layout)?

    python3 validation/gpu/probe_wgmma_shift.py

For rows of 16, 32 and 64 channels swizzled over the row's width (32, 64, 128 bytes) and,
as a control, 32-channel rows with a 32-byte swizzle (narrower than the row), a [256, C]
buffer is stored once and wgmma reads the [64, C] view starting at each row 0..39, against
x[shift:shift + 64] @ w.T in float32 (relative error by norm; output poisoned with NaN)."""
import sys

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, warpgroup_mma

UNITS = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[0])


@gluon.jit
def shifted_kernel(x_ptr, w_ptr, o_ptr, SHIFT: gl.constexpr, XR: gl.constexpr,
                   BLOCK: gl.constexpr, SW: gl.constexpr, M: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [32 // (BLOCK // 8), BLOCK // 8], [4, 1], [1, 0])
    XL: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=SW, element_bitwidth=16, rank=2)
    rows = gl.arange(0, XR, layout=gl.SliceLayout(1, L))
    cols = gl.arange(0, BLOCK, layout=gl.SliceLayout(0, L))
    x = gl.load(x_ptr + gl.expand_dims(rows, 1) * BLOCK + gl.expand_dims(cols, 0))
    xs = gl.allocate_shared_memory(gl.float16, [XR, BLOCK], XL, x)
    wr = gl.arange(0, BLOCK, layout=gl.SliceLayout(1, L))
    w = gl.load(w_ptr + gl.expand_dims(wr, 1) * BLOCK + gl.expand_dims(cols, 0))
    ws = gl.allocate_shared_memory(gl.float16, [BLOCK, BLOCK], XL, w)
    fence_async_shared()
    ACC: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                  instr_shape=[16, BLOCK, 16])
    acc = gl.zeros([M, BLOCK], gl.float32, ACC)
    units = xs._reinterpret(gl.float16, [XR * BLOCK // 8, 8], UNITS)
    a = units.index(SHIFT * (BLOCK // 8))._reinterpret(gl.float16, [M, BLOCK], XL)
    acc = warpgroup_mma(a, ws.permute((1, 0)), acc)
    orow = gl.arange(0, M, layout=gl.SliceLayout(1, ACC))
    ocol = gl.arange(0, BLOCK, layout=gl.SliceLayout(0, ACC))
    gl.store(o_ptr + gl.expand_dims(orow, 1) * BLOCK + gl.expand_dims(ocol, 0), acc)


def main() -> None:
    bad = 0
    for block, sw in ((16, 32), (32, 64), (32, 32), (64, 128)):
        for shift in range(0, 40):
            x = torch.randn(256, block, device="cuda", dtype=torch.float16)
            w = torch.randn(block, block, device="cuda", dtype=torch.float16)
            o = torch.full((64, block), float("nan"), device="cuda")
            try:
                shifted_kernel[(1,)](x, w, o, shift, 256, block, sw, 64, num_warps=4)
            except Exception as e:  # noqa: BLE001
                print(f"block {block} swizzle {sw} shift {shift}: {type(e).__name__} "
                      f"{str(e)[:200]}")
                bad += 1
                break
            ref = x[shift:shift + 64].float() @ w.float().T
            err = float((o - ref).norm() / ref.norm())
            print(f"block {block} swizzle {sw} shift {shift}: rel err {err:.2e}")
            bad += err > 1e-2
    print("bad", bad)
    sys.exit(0)


if __name__ == "__main__":
    main()
