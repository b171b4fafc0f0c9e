"""Gradient of the weight for few-input-channel stems (C <= 8, e.g. RGB 7x7/s2).

``wgrad_gemm`` runs one GEMM per filter tap with the C input channels as its N
dimension: for C = 3 each tile is mostly padding and dY is read once per tap (49
times for a 7x7 stem). Here, as in the forward ``stem`` family, the (t, r, s, c)
filter elements are flattened into one column index of length T*R*S*C:
dW[k, (t, r, s, c)] = dY^T [K, pixels] x im2col(X) [pixels, T*R*S*C], one GEMM
reduced over the output pixels, each column's input offset split by compile-time
filter sizes. Pixels are split over SPLIT_K programs whose float32 slices are added
in a fixed order (``wgrad_gemm.reduce_splits``): no atomics.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, GradCall, tile_fits
from .common import (
    cdiv,
    dot_precision,
    needs_int64,
    output_pixels,
    strides5,
    tile_ids,
    upcast_dot,
    window_inside,
)
from .grad_common import GradGrid, grad_acc
from .implicit_gemm import make_configs
from .launcher import launch_kernel
from .stem import StemGradFamily, filter_cols, filter_columns
from .wgrad_gemm import split_ok, split_slices

_RUNTIME_INTS = ["P", "D", "H", "W", "OD", "OH", "OW", "std", "sth", "stw", "pdd", "pdh",
                 "pdw", "dld", "dlh", "dlw", "ITERS_PER_SPLIT", "WS_STRIDE"]


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def wgrad_stem_kernel(
    dy_ptr, x_ptr, dw_ptr, ws_ptr,
    P, KTOT, D, H, W, OD, OH, OW, std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
    ITERS_PER_SPLIT, WS_STRIDE,
    syn, syc, syd, syh, syw, sxn, sxc, sxd, sxh, sxw, swk, swc, swt, swr, sws,
    KT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr, KC: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr,
    PREC: tl.constexpr, ACC: tl.constexpr, UPCAST: tl.constexpr, INT64: tl.constexpr,
):
    KDIM: tl.constexpr = KT * KR * KS * KC
    pid_m, pid_n = tile_ids(tl.program_id(0), tl.cdiv(KTOT, BLOCK_M), tl.cdiv(KDIM, BLOCK_N),
                            GROUP_M)
    pid_k = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_j = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = offs_m < KTOT
    j_mask = offs_j < KDIM
    kt, kr, ks, c = filter_columns(offs_j, KR, KS, KC)
    dd = kt * dld
    dh = kr * dlh
    dw = ks * dlw
    x_col = dd * sxd + dh * sxh + dw * sxw + c * sxc
    y_col = offs_m * syc
    offs_p0 = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for i in range(0, ITERS_PER_SPLIT):
        offs_p = (pid_k * ITERS_PER_SPLIT + i) * BLOCK_K + offs_p0
        p_ok = offs_p < P
        y_row, x_row, id0, ih0, iw0 = output_pixels(
            offs_p, OD, OH, OW, std, sth, stw, pdd, pdh, pdw,
            syn, syd, syh, syw, sxn, sxd, sxh, sxw, INT64)
        a = tl.load(dy_ptr + y_row[None, :] + y_col[:, None],
                    mask=m_mask[:, None] & p_ok[None, :], other=0.0)
        ok = (p_ok[:, None] & j_mask[None, :]
              & window_inside(id0, ih0, iw0, dd, dh, dw, D, H, W))
        b = tl.load(x_ptr + x_row[:, None] + x_col[None, :], mask=ok, other=0.0)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PREC, out_dtype=ACC)
    mask = m_mask[:, None] & j_mask[None, :]
    if SPLIT_K == 1:
        w_off = (offs_m * swk)[:, None] + (c * swc + kt * swt + kr * swr + ks * sws)[None, :]
        tl.store(dw_ptr + w_off, acc.to(dw_ptr.dtype.element_ty), mask=mask)
    else:
        # Workspace [SPLIT_K, T*R*S, K, C] as in wgrad_gemm (one group: C/G = C).
        tap = (kt * KR + kr) * KS + ks
        ws_off = (tap * (KTOT * KC) + c)[None, :] + (offs_m * KC)[:, None]
        tl.store(ws_ptr + pid_k.to(tl.int64) * WS_STRIDE + ws_off, acc, mask=mask)


# (BLOCK_M over output channels, BLOCK_N over the flattened (t, r, s, c) columns,
# BLOCK_K over pixels, num_warps, num_stages)
WGRAD_STEM_TILES = (
    (32, 64, 64, 4, 3), (32, 128, 64, 4, 3), (64, 32, 64, 4, 3), (64, 64, 32, 4, 3),
    (64, 64, 64, 4, 3), (64, 128, 32, 4, 3), (64, 128, 64, 8, 3), (64, 256, 32, 8, 3),
    (128, 64, 32, 8, 3),
)
WGRAD_STEM_SPLITS = (1, 16, 64, 256)


class WgradStemFamily(StemGradFamily):
    name = "wgrad_stem"
    summary = ("gradient of the weight for few input channels: one GEMM over the flattened "
               "(t, r, s, c) filter columns, split with a fixed-order reduction")
    direction = "wgrad"
    configs = tuple(c for s in WGRAD_STEM_SPLITS
                    for c in make_configs(WGRAD_STEM_TILES, GROUP_M=4, SPLIT_K=s))

    def grid(self, geom, cfg: Config) -> GradGrid:
        """Output channels x flattened filter columns, reducing over the output pixels."""
        bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
        cols = filter_cols(geom)
        return GradGrid(m=geom.k, n=cols, red=geom.gemm_m, block_m=bm, block_n=bn,
                        tiles_m=cdiv(geom.k, bm), tiles_n=cdiv(cols, bn), mult=1,
                        k_steps=cdiv(geom.gemm_m, bk), k_block=bk)

    def config_ok(self, geom, cfg, device) -> str | None:
        if not tile_fits(cfg["BLOCK_M"], geom.k, 32):
            return f"BLOCK_M={cfg['BLOCK_M']} exceeds the {geom.k} output channels"
        cols = filter_cols(geom)
        if not tile_fits(cfg["BLOCK_N"], cols, 32):
            return f"BLOCK_N={cfg['BLOCK_N']} exceeds the {cols} filter columns"
        return (split_ok(geom, cfg, device, self.grid(geom, cfg))
                or super().config_ok(geom, cfg, device))

    def launch(self, call: GradCall, cfg: Config) -> None:
        g = call.geom
        split = cfg["SPLIT_K"]
        tiles = self.grid(g, cfg)
        with split_slices(call, split, tiles.k_steps) as (per_split, ws, slices):
            launch_kernel(wgrad_stem_kernel, (tiles.tiles_m * tiles.tiles_n, slices),
                call.dy, call.x, call.out, ws,
                g.gemm_m, g.k, g.d, g.h, g.w, *g.out_spatial, *g.stride, *g.pad, *g.dilation,
                per_split, g.k * filter_cols(g),
                *strides5(call.dy), *strides5(call.x), *strides5(call.out),
                KT=g.t, KR=g.r, KS=g.s, KC=g.c,
                BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"],
                GROUP_M=cfg["GROUP_M"], SPLIT_K=split, PREC=dot_precision(call),
                ACC=grad_acc(call), UPCAST=upcast_dot(call), INT64=needs_int64(call),
                num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
            )
