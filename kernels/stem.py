"""Small-input-channel path for network stems (C <= 8, e.g. 3x224x224 with 7x7/s2).

With C = 3 a channel-block loop wastes most of each matrix-unit tile. Here the
reduction is flattened over (t, r, s, c) into one K dimension of length
T*R*S*C (147 for a 7x7 RGB stem); filter sizes are compile-time constants so
the index split of each K element is a multiply-shift, not a division.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, ConvCall, KernelFamily, channel_tile_too_wide, tile_fits
from .common import (
    cdiv,
    dot_precision,
    needs_int64,
    out_args,
    split_rows,
    store_tile,
    strides5,
    tile_ids,
    upcast_dot,
)
from .grad_common import GradFamily
from .implicit_gemm import gemm_smem, make_configs
from .launcher import launch_kernel

MAX_C = 8
MAX_KDIM = 4096


@triton.jit
def filter_columns(offs_j, KR: tl.constexpr, KS: tl.constexpr, KC: tl.constexpr):
    """Flattened (t, r, s, c) filter column -> (kt, kr, ks, c); sizes are constexpr, so
    each split is a multiply-shift."""
    c = offs_j % KC
    ks = (offs_j // KC) % KS
    kr = (offs_j // (KC * KS)) % KR
    kt = offs_j // (KC * KS * KR)
    return kt, kr, ks, c


@triton.jit(do_not_specialize=["M", "D", "H", "W", "OD", "OH", "OW",
                               "std", "sth", "stw", "pdd", "pdh", "pdw", "dld", "dlh", "dlw"])
def stem_kernel(
    x_ptr, w_ptr, out_ptr, syn, syc, syd, syh, syw,
    bias_ptr, res_ptr, srn, src, srd, srh, srw,
    M, KTOT, D, H, W, OD, OH, OW,
    std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
    sxn, sxc, sxd, sxh, sxw, swk, swc, swt, swr, sws,
    KT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr, KC: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    ACT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr,
    PREC: tl.constexpr, UPCAST: tl.constexpr, INT64: tl.constexpr,
):
    KDIM: tl.constexpr = KT * KR * KS * KC
    pid_m, pid_n = tile_ids(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(KTOT, BLOCK_N),
                            GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = offs_m < M
    n_mask = offs_n < KTOT
    n, od, oh, ow = split_rows(offs_m, OD, OH, OW)
    id0 = od * std - pdd
    ih0 = oh * sth - pdh
    iw0 = ow * stw - pdw
    if INT64:
        x_row = n.to(tl.int64) * sxn + id0.to(tl.int64) * sxd + ih0.to(tl.int64) * sxh \
            + iw0.to(tl.int64) * sxw
        w_col = offs_n.to(tl.int64) * swk
    else:
        x_row = n * sxn + id0 * sxd + ih0 * sxh + iw0 * sxw
        w_col = offs_n * swk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, KDIM, BLOCK_K):
        kk = k0 + tl.arange(0, BLOCK_K)
        kt, kr, ks, c = filter_columns(kk, KR, KS, KC)
        k_ok = kk < KDIM
        dd = kt * dld
        dh = kr * dlh
        dw = ks * dlw
        idd = id0[:, None] + dd[None, :]
        ih = ih0[:, None] + dh[None, :]
        iw = iw0[:, None] + dw[None, :]
        ok = (m_mask[:, None] & k_ok[None, :] & (idd >= 0) & (idd < D) & (ih >= 0) & (ih < H)
              & (iw >= 0) & (iw < W))
        a_off = x_row[:, None] + (dd * sxd + dh * sxh + dw * sxw + c * sxc)[None, :]
        a = tl.load(x_ptr + a_off, mask=ok, other=0.0)
        b_off = w_col[None, :] + (c * swc + kt * swt + kr * swr + ks * sws)[:, None]
        b = tl.load(w_ptr + b_off, mask=k_ok[:, None] & n_mask[None, :], other=0.0)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PREC)
    store_tile(acc, n, od, oh, ow, m_mask, offs_n, n_mask,
               out_ptr, syn, syc, syd, syh, syw, bias_ptr, res_ptr, srn, src, srd, srh, srw,
               HAS_BIAS, HAS_RES, ACT, INT64)


# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)
STEM_TILES = (
    (64, 32, 16, 4, 3), (64, 32, 32, 4, 3), (64, 64, 16, 4, 3), (64, 64, 32, 4, 3),
    (64, 64, 64, 4, 3), (128, 32, 32, 4, 3), (128, 64, 16, 4, 3), (128, 64, 32, 4, 3),
    (128, 64, 32, 8, 3), (128, 64, 64, 8, 3), (128, 128, 32, 8, 3), (256, 32, 32, 8, 3),
    (256, 64, 16, 8, 3), (256, 64, 32, 8, 3), (256, 64, 64, 8, 2), (32, 64, 32, 4, 3),
)


class StemFamily(KernelFamily):
    name = "stem"
    summary = "few input channels: reduction flattened over (t, r, s, c), filter size constexpr"
    configs = make_configs(STEM_TILES, GROUP_M=8)

    def supports(self, geom) -> str | None:
        if geom.g != 1:
            return "grouped convolutions go to grouped_gemm / grouped_direct"
        if geom.c > MAX_C:
            return f"{geom.c} input channels: more than the {MAX_C} this path is for"
        if geom.gemm_k > MAX_KDIM:
            return f"reduction of {geom.gemm_k} elements is too long to unroll"
        return None

    def smem_bytes(self, geom, cfg: Config) -> int:
        per_stage = (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * cfg["BLOCK_K"] * geom.elem_bytes
        return max(cfg["num_stages"] - 1, 1) * per_stage

    def config_ok(self, geom, cfg, device) -> str | None:
        why = channel_tile_too_wide(geom, cfg["BLOCK_N"], 32)
        if why:
            return why
        if not tile_fits(cfg["BLOCK_K"], geom.gemm_k, 16):
            return f"BLOCK_K={cfg['BLOCK_K']} exceeds the reduction of {geom.gemm_k}"
        if not tile_fits(cfg["BLOCK_M"], geom.gemm_m, 64):
            return f"BLOCK_M={cfg['BLOCK_M']} exceeds the {geom.gemm_m} output pixels"
        return super().config_ok(geom, cfg, device)

    def launch(self, call: ConvCall, cfg: Config) -> None:
        g = call.geom
        bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
        grid = (cdiv(g.gemm_m, bm) * cdiv(g.k, bn),)
        launch_kernel(stem_kernel, grid,
            call.x, call.w, *out_args(call),
            g.gemm_m, g.k, g.d, g.h, g.w, *g.out_spatial,
            *g.stride, *g.pad, *g.dilation, *strides5(call.x), *strides5(call.w),
            KT=g.t, KR=g.r, KS=g.s, KC=g.c,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=cfg.get("GROUP_M", 8),
            ACT=call.activation, HAS_BIAS=call.bias is not None,
            HAS_RES=call.residual is not None, PREC=dot_precision(call),
            UPCAST=upcast_dot(call), INT64=needs_int64(call),
            num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
        )


def filter_cols(geom) -> int:
    """Flattened (t, r, s, c) filter columns of one output channel."""
    return geom.c * geom.t * geom.r * geom.s


class StemGradFamily(GradFamily):
    """What the stem's gradient families (``dgrad_stem``, ``wgrad_stem``) share: dense
    convolutions with at most MAX_C input channels, pipelined GEMM tiles."""

    def supports(self, geom) -> str | None:
        if geom.g != 1:
            return f"grouped convolutions go to the packed / direct {self.direction} families"
        if geom.c > MAX_C:
            return f"{geom.c} input channels: more than the {MAX_C} this path is for"
        return None

    def smem_bytes(self, geom, cfg: Config) -> int:
        return gemm_smem(geom, cfg)
