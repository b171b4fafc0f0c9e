"""Direct (FMA) convolution for depthwise and few-channel groups.

With one to sixteen input channels a group there is no matrix worth handing
to the tensor cores: each program computes a tile of output pixels x output
channels with fused multiply-adds, reading NHWC channels contiguously.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, ConvCall, KernelFamily, tile_fits
from .common import needs_int64, out_args, split_rows, store_tile, strides5
from .launcher import launch_kernel


@triton.jit(do_not_specialize=["M", "D", "H", "W", "OD", "OH", "OW",
                               "std", "sth", "stw", "pdd", "pdh", "pdw", "dld", "dlh", "dlw"])
def direct_kernel(
    x_ptr, w_ptr, out_ptr, syn, syc, syd, syh, syw,
    bias_ptr, res_ptr, srn, src, srd, srh, srw,
    M, CG, KG, KTOT, D, H, W, OD, OH, OW,
    std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
    sxn, sxc, sxd, sxh, sxw, swk, swc, swt, swr, sws,
    KT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, DEPTHWISE: tl.constexpr,
    ACT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr, INT64: tl.constexpr,
):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = offs_m < M
    k_mask = offs_k < KTOT
    if DEPTHWISE:
        c_in = offs_k  # one input channel per output channel: contiguous loads
    else:
        c_in = (offs_k // KG) * CG
    n, od, oh, ow = split_rows(offs_m, OD, OH, OW)
    id0 = od * std - pdd
    ih0 = oh * sth - pdh
    iw0 = ow * stw - pdw
    if INT64:
        x_row = n.to(tl.int64) * sxn
        x_col = c_in.to(tl.int64) * sxc
        w_col = offs_k.to(tl.int64) * swk
    else:
        x_row = n * sxn
        x_col = c_in * sxc
        w_col = offs_k * swk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # Filter taps are compile-time constants: the tap loops unroll, so the loads
    # of all taps are in flight together instead of one load-FMA chain per tap.
    for kt in tl.static_range(KT):
        for kr in tl.static_range(KR):
            for ks in tl.static_range(KS):
                idd = id0 + kt * dld
                ih = ih0 + kr * dlh
                iw = iw0 + ks * dlw
                row_ok = (m_mask & (idd >= 0) & (idd < D) & (ih >= 0) & (ih < H) & (iw >= 0)
                          & (iw < W))
                x_ptrs = x_ptr + (x_row + idd * sxd + ih * sxh + iw * sxw)[:, None] \
                    + x_col[None, :]
                w_ptrs = w_ptr + w_col + kt * swt + kr * swr + ks * sws
                mask = row_ok[:, None] & k_mask[None, :]
                for ci in range(0, CG):
                    xv = tl.load(x_ptrs + ci * sxc, mask=mask, other=0.0)
                    wv = tl.load(w_ptrs + ci * swc, mask=k_mask, other=0.0)
                    acc += xv.to(tl.float32) * wv.to(tl.float32)[None, :]
    store_tile(acc, n, od, oh, ow, m_mask, offs_k, k_mask,
               out_ptr, syn, syc, syd, syh, syw, bias_ptr, res_ptr, srn, src, srd, srh, srw,
               HAS_BIAS, HAS_RES, ACT, INT64)


MAX_TAPS = 125  # filter taps unrolled at compile time (5x5x5)

# (BLOCK_M output pixels, BLOCK_N output channels, num_warps)
DIRECT_TILES = (
    (8, 128, 2), (8, 256, 4), (16, 32, 2), (16, 64, 2), (16, 128, 4), (16, 256, 4),
    (32, 16, 2), (32, 32, 2), (32, 64, 4), (32, 128, 4), (32, 256, 8),
    (64, 16, 2), (64, 32, 4), (64, 64, 4), (64, 128, 8), (128, 16, 4), (128, 32, 4),
    (128, 64, 8), (256, 16, 4), (256, 32, 8),
)


class GroupedDirectFamily(KernelFamily):
    name = "grouped_direct"
    summary = "direct FMA convolution for depthwise and groups of <= 16 channels"
    configs = tuple(Config(BLOCK_M=bm, BLOCK_N=bn, num_warps=wp, num_stages=1)
                    for bm, bn, wp in DIRECT_TILES)

    def supports(self, geom) -> str | None:
        if geom.g == 1:
            return "not a grouped convolution"
        if geom.t * geom.r * geom.s > MAX_TAPS:
            return f"{geom.t * geom.r * geom.s} filter taps are too many to unroll"
        if geom.cg > 16:
            return f"{geom.cg} input channels per group: a GEMM family is the better fit"
        return None

    def config_ok(self, geom, cfg, device) -> str | None:
        if not tile_fits(cfg["BLOCK_N"], geom.k, 16):
            return f"BLOCK_N={cfg['BLOCK_N']} exceeds the {geom.k} output channels"
        if not tile_fits(cfg["BLOCK_M"], geom.gemm_m, 8):
            return f"BLOCK_M={cfg['BLOCK_M']} exceeds the {geom.gemm_m} output pixels"
        return None

    def launch(self, call: ConvCall, cfg: Config) -> None:
        g = call.geom
        bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
        grid = (triton.cdiv(g.gemm_m, bm), triton.cdiv(g.k, bn))
        launch_kernel(direct_kernel, grid,
            call.x, call.w, *out_args(call),
            g.gemm_m, g.cg, g.kg, g.k, g.d, g.h, g.w, *g.out_spatial,
            *g.stride, *g.pad, *g.dilation, *strides5(call.x), *strides5(call.w),
            KT=g.t, KR=g.r, KS=g.s, BLOCK_M=bm, BLOCK_N=bn, DEPTHWISE=g.cg == 1 and g.kg == 1,
            ACT=call.activation, HAS_BIAS=call.bias is not None,
            HAS_RES=call.residual is not None, INT64=needs_int64(call),
            num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
        )
