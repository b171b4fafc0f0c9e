"""Direct (FMA) convolution for depthwise and few-channel groups.

With one to sixteen input channels a group there is no matrix worth handing
to the tensor cores: each program computes a tile of output pixels x output
channels with fused multiply-adds, reading NHWC channels contiguously.

Depthwise (one input channel a group) reads one channel per output channel.
With 2..16 channels a group, a program covers ``GPB = BLOCK_N // KG`` whole
groups: each filter tap loads their ``GPB * CG`` input channels once, as one
contiguous run per pixel, and contracts it group by group in registers
([pixels, GPB, 1, CG] x [1, GPB, KG, CG], summed over CG). No channel is
gathered twice and no cross-group product is computed (unlike grouped_packed's
block-diagonal matrix tile). Channel counts are padded to powers of two inside
the program (masked), so any CG and KG work.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, ConvCall, KernelFamily, channel_tile_too_wide, next_pow2, tile_fits
from .common import cdiv, needs_int64, out_args, split_rows, store_tile, strides5, tap_rows
from .launcher import launch_kernel


@triton.jit(do_not_specialize=["M", "D", "H", "W", "OD", "OH", "OW",
                               "std", "sth", "stw", "pdd", "pdh", "pdw", "dld", "dlh", "dlw"])
def direct_kernel(
    x_ptr, w_ptr, out_ptr, syn, syc, syd, syh, syw,
    bias_ptr, res_ptr, srn, src, srd, srh, srw,
    M, KG, KTOT, D, H, W, OD, OH, OW,
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
        c_in = offs_k // KG  # channel multiplier KG
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
                row_ok, x_off = tap_rows(m_mask, x_row, id0, ih0, iw0, kt, kr, ks, dld, dlh,
                                         dlw, D, H, W, sxd, sxh, sxw)
                xv = tl.load(x_ptr + x_off[:, None] + x_col[None, :],
                             mask=row_ok[:, None] & k_mask[None, :], other=0.0)
                wv = tl.load(w_ptr + w_col + kt * swt + kr * swr + ks * sws, mask=k_mask,
                             other=0.0)
                acc += xv.to(tl.float32) * wv.to(tl.float32)[None, :]
    store_tile(acc, n, od, oh, ow, m_mask, offs_k, k_mask,
               out_ptr, syn, syc, syd, syh, syw, bias_ptr, res_ptr, srn, src, srd, srh, srw,
               HAS_BIAS, HAS_RES, ACT, INT64)


@triton.jit(do_not_specialize=["M", "D", "H", "W", "OD", "OH", "OW",
                               "std", "sth", "stw", "pdd", "pdh", "pdw", "dld", "dlh", "dlw"])
def grouped_fma_kernel(
    x_ptr, w_ptr, out_ptr, syn, syc, syd, syh, syw,
    bias_ptr, res_ptr, srn, src, srd, srh, srw,
    M, G, D, H, W, OD, OH, OW,
    std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
    sxn, sxc, sxd, sxh, sxw, swk, swc, swt, swr, sws,
    CG: tl.constexpr, KG: tl.constexpr, CGP: tl.constexpr, KGP: tl.constexpr,
    GPB: tl.constexpr, KT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    ACT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr, INT64: tl.constexpr,
):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    m_mask = offs_m < M
    g0 = tl.program_id(1) * GPB
    # Input channels of the block's groups, (group, channel) flattened; with CG a
    # power of two this is one contiguous run, which the loads vectorise.
    if CG == CGP:
        c_rel = tl.arange(0, GPB * CGP)
        c_ok = g0 + c_rel // CG < G
    else:
        grp_c = tl.arange(0, GPB)[:, None] + tl.zeros((1, CGP), tl.int32)
        ci = tl.arange(0, CGP)[None, :] + tl.zeros((GPB, 1), tl.int32)
        c_rel = tl.reshape(grp_c * CG + ci, (GPB * CGP,))
        c_ok = tl.reshape((ci < CG) & (g0 + grp_c < G), (GPB * CGP,))
    # Output channels (group, j) flattened, and each one's CG weights.
    grp_k = tl.arange(0, GPB)[:, None] + tl.zeros((1, KGP), tl.int32)
    kj = tl.arange(0, KGP)[None, :] + tl.zeros((GPB, 1), tl.int32)
    k_glob = tl.reshape((g0 + grp_k) * KG + kj, (GPB * KGP,))
    k_mask = tl.reshape((kj < KG) & (g0 + grp_k < G), (GPB * KGP,))
    offs_ci = tl.arange(0, CGP)
    w_mask = k_mask[:, None] & (offs_ci < CG)[None, :]
    n, od, oh, ow = split_rows(offs_m, OD, OH, OW)
    id0 = od * std - pdd
    ih0 = oh * sth - pdh
    iw0 = ow * stw - pdw
    if INT64:
        x_row = n.to(tl.int64) * sxn + (g0 * CG).to(tl.int64) * sxc
        w_off = k_glob.to(tl.int64)[:, None] * swk + offs_ci[None, :] * swc
    else:
        x_row = n * sxn + g0 * CG * sxc
        w_off = k_glob[:, None] * swk + offs_ci[None, :] * swc
    acc = tl.zeros((BLOCK_M, GPB, KGP), dtype=tl.float32)
    for kt in tl.static_range(KT):
        for kr in tl.static_range(KR):
            for ks in tl.static_range(KS):
                row_ok, x_off = tap_rows(m_mask, x_row, id0, ih0, iw0, kt, kr, ks, dld, dlh,
                                         dlw, D, H, W, sxd, sxh, sxw)
                xv = tl.load(x_ptr + x_off[:, None] + (c_rel * sxc)[None, :],
                             mask=row_ok[:, None] & c_ok[None, :], other=0.0)
                wv = tl.load(w_ptr + w_off + kt * swt + kr * swr + ks * sws, mask=w_mask,
                             other=0.0)
                x4 = tl.reshape(xv.to(tl.float32), (BLOCK_M, GPB, 1, CGP))
                w4 = tl.reshape(wv.to(tl.float32), (1, GPB, KGP, CGP))
                acc += tl.sum(x4 * w4, axis=3)
    store_tile(tl.reshape(acc, (BLOCK_M, GPB * KGP)), n, od, oh, ow, m_mask, k_glob, k_mask,
               out_ptr, syn, syc, syd, syh, syw, bias_ptr, res_ptr, srn, src, srd, srh, srw,
               HAS_BIAS, HAS_RES, ACT, INT64)


MAX_TAPS = 125  # filter taps unrolled at compile time (5x5x5)
# Products a thread holds per tap in grouped_fma_kernel ([BLOCK_M, GPB, KGP, CGP]
# spread over the program's threads); more would spill registers.
MAX_PRODUCTS_PER_THREAD = 64

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

    def hard_ok(self, geom, cfg, device) -> str | None:
        if geom.cg == 1:
            return None
        kgp, cgp = next_pow2(geom.kg), next_pow2(geom.cg)
        if cfg["BLOCK_N"] < kgp:
            return f"BLOCK_N={cfg['BLOCK_N']} holds no whole group of {geom.kg} output channels"
        per_thread = cfg["BLOCK_M"] * cfg["BLOCK_N"] * cgp // (32 * cfg["num_warps"])
        if per_thread > MAX_PRODUCTS_PER_THREAD:
            return (f"{per_thread} products a thread per tap (BLOCK_M x BLOCK_N x {cgp} "
                    f"channels): over {MAX_PRODUCTS_PER_THREAD}, registers would spill")
        return None

    def config_ok(self, geom, cfg, device) -> str | None:
        why = self.hard_ok(geom, cfg, device)
        if why:
            return why
        why = channel_tile_too_wide(geom, cfg["BLOCK_N"])
        if why:
            return why
        if not tile_fits(cfg["BLOCK_M"], geom.gemm_m, 8):
            return f"BLOCK_M={cfg['BLOCK_M']} exceeds the {geom.gemm_m} output pixels"
        return None

    def launch(self, call: ConvCall, cfg: Config) -> None:
        if call.geom.cg > 1:
            self.launch_grouped(call, cfg)
            return
        g = call.geom
        bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
        grid = (cdiv(g.gemm_m, bm), cdiv(g.k, bn))
        launch_kernel(direct_kernel, grid,
            call.x, call.w, *out_args(call),
            g.gemm_m, g.kg, g.k, g.d, g.h, g.w, *g.out_spatial,
            *g.stride, *g.pad, *g.dilation, *strides5(call.x), *strides5(call.w),
            KT=g.t, KR=g.r, KS=g.s, BLOCK_M=bm, BLOCK_N=bn, DEPTHWISE=g.kg == 1,
            ACT=call.activation, HAS_BIAS=call.bias is not None,
            HAS_RES=call.residual is not None, INT64=needs_int64(call),
            num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
        )

    def launch_grouped(self, call: ConvCall, cfg: Config) -> None:
        g = call.geom
        bm = cfg["BLOCK_M"]
        kgp, cgp = next_pow2(g.kg), next_pow2(g.cg)
        gpb = min(cfg["BLOCK_N"] // kgp, next_pow2(g.g))
        grid = (cdiv(g.gemm_m, bm), cdiv(g.g, gpb))
        launch_kernel(grouped_fma_kernel, grid,
            call.x, call.w, *out_args(call),
            g.gemm_m, g.g, g.d, g.h, g.w, *g.out_spatial,
            *g.stride, *g.pad, *g.dilation, *strides5(call.x), *strides5(call.w),
            CG=g.cg, KG=g.kg, CGP=cgp, KGP=kgp, GPB=gpb, KT=g.t, KR=g.r, KS=g.s, BLOCK_M=bm,
            ACT=call.activation, HAS_BIAS=call.bias is not None,
            HAS_RES=call.residual is not None, INT64=needs_int64(call),
            num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
        )
