"""Gradient of a depthwise filter with every tap of a pixel block in one program.

``wgrad_direct`` runs a program per (channel block, tap): each reads its pixels'
dY again for every tap, 9 times for a 3x3 filter, and the layer's gradient becomes
L2-bound. Here a program owns BLOCK_N output channels and a slice of the output
pixels; per step it loads a [BLOCK_M pixels, BLOCK_N] block of dY once and the matching
[BLOCK_M, taps, BLOCK_N] input windows (neighbouring taps overlap, so they come
from L1), and adds dY x X into a [BLOCK_M, taps, BLOCK_N] FMA accumulator that is
summed over pixels once, at the end. Pixel slices are split over SPLIT_K programs
added in a fixed order (``wgrad_gemm.reduce_splits``): no atomics.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, GradCall, next_pow2
from .common import cdiv, needs_int64, output_pixels, strides5, window_inside
from .grad_common import DepthwiseWgradFamily, GradGrid, grad_acc
from .launcher import launch_kernel
from .wgrad_gemm import split_ok, split_slices

_RUNTIME_INTS = ["P", "D", "H", "W", "OD", "OH", "OW", "std", "sth", "stw", "pdd", "pdh",
                 "pdw", "dld", "dlh", "dlw", "ITERS_PER_SPLIT", "WS_STRIDE"]
# Most taps a filter may have (7x7 = 49, padded to 64 accumulator rows).
MAX_TAPS = 64
# Accumulator elements a thread may hold (BLOCK_M x taps (pow2) x BLOCK_N over the
# program's threads); larger tiles spill.
MAX_ACC_PER_THREAD = 64


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def wgrad_depthwise_taps_kernel(
    dy_ptr, x_ptr, dw_ptr, ws_ptr,
    P, KTOT, KG, D, H, W, OD, OH, OW, std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
    ITERS_PER_SPLIT, WS_STRIDE,
    syn, syc, syd, syh, syw, sxn, sxc, sxd, sxh, sxw, swk, swc, swt, swr, sws,
    KT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr, TAPS_P2: tl.constexpr,
    BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr, SPLIT_K: tl.constexpr,
    ONE_PER_GROUP: tl.constexpr, ACC: tl.constexpr, INT64: tl.constexpr,
):
    offs_k = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    pid_k = tl.program_id(1)
    k_mask = offs_k < KTOT
    y_col = offs_k * syc
    # One input channel a group; with one output channel each (KG == 1) the channel
    # offsets stay provably contiguous, so the loads vectorize.
    x_col = offs_k * sxc if ONE_PER_GROUP else (offs_k // KG) * sxc
    taps = tl.arange(0, TAPS_P2)
    t_ok = taps < KT * KR * KS
    ks = taps % KS
    kr = (taps // KS) % KR
    kt = taps // (KS * KR)
    dd = kt * dld
    dh = kr * dlh
    dw = ks * dlw
    tap_off = dd * sxd + dh * sxh + dw * sxw
    offs_p0 = tl.arange(0, BLOCK_P)
    acc = tl.zeros((BLOCK_P, TAPS_P2, BLOCK_C), dtype=ACC)
    for i in range(0, ITERS_PER_SPLIT):
        offs_p = (pid_k * ITERS_PER_SPLIT + i) * BLOCK_P + offs_p0
        p_ok = offs_p < P
        y_row, x_row, id0, ih0, iw0 = output_pixels(
            offs_p, OD, OH, OW, std, sth, stw, pdd, pdh, pdw,
            syn, syd, syh, syw, sxn, sxd, sxh, sxw, INT64)
        dy = tl.load(dy_ptr + y_row[:, None] + y_col[None, :],
                     mask=p_ok[:, None] & k_mask[None, :], other=0.0)
        ok = (p_ok[:, None] & t_ok[None, :]
              & window_inside(id0, ih0, iw0, dd, dh, dw, D, H, W))
        x_tap = x_row[:, None] + tap_off[None, :]
        xv = tl.load(x_ptr + x_tap[:, :, None] + x_col[None, None, :],
                     mask=ok[:, :, None] & k_mask[None, None, :], other=0.0)
        acc += dy.to(ACC)[:, None, :] * xv.to(ACC)
    total = tl.sum(acc, axis=0)  # [taps, channels]
    mask = t_ok[:, None] & k_mask[None, :]
    if SPLIT_K == 1:
        w_off = (offs_k * swk)[None, :] + (kt * swt + kr * swr + ks * sws)[:, None]
        tl.store(dw_ptr + w_off, total.to(dw_ptr.dtype.element_ty), mask=mask)
    else:
        # Workspace [SPLIT_K, T*R*S, K, C/G = 1] as in wgrad_gemm.
        ws_off = (taps * KTOT)[:, None] + offs_k[None, :]
        tl.store(ws_ptr + pid_k.to(tl.int64) * WS_STRIDE + ws_off, total, mask=mask)


# (BLOCK_M pixels a step, BLOCK_N channels, num_warps)
TAPS_TILES = ((2, 64, 4), (4, 32, 4), (8, 32, 4), (16, 32, 4), (8, 64, 4), (4, 128, 4), (16, 64, 8),
              (32, 32, 8), (8, 128, 8))
TAPS_SPLITS = (1, 8, 32, 128, 512)


class WgradDepthwiseTapsFamily(DepthwiseWgradFamily):
    name = "wgrad_depthwise_taps"
    summary = ("gradient of a depthwise filter: every tap of a pixel block in one program "
               "(dY read once), FMA, split with a fixed-order reduction")
    max_taps = MAX_TAPS
    configs = tuple(Config(BLOCK_M=bp, BLOCK_N=bc, SPLIT_K=sk, num_warps=wp, num_stages=1)
                    for sk in TAPS_SPLITS for bp, bc, wp in TAPS_TILES)

    def grid(self, geom, cfg: Config) -> GradGrid:
        """Blocks of output channels, each reducing all taps over the output pixels."""
        bp, bc = cfg["BLOCK_M"], cfg["BLOCK_N"]
        taps = geom.t * geom.r * geom.s
        return GradGrid(m=taps, n=geom.k, red=geom.gemm_m, block_m=next_pow2(taps),
                        block_n=bc, tiles_m=1, tiles_n=cdiv(geom.k, bc), mult=1,
                        k_steps=cdiv(geom.gemm_m, bp), k_block=bp, fma=True)

    def hard_ok(self, geom, cfg, device) -> str | None:
        acc = cfg["BLOCK_M"] * next_pow2(geom.t * geom.r * geom.s) * cfg["BLOCK_N"]
        if acc > MAX_ACC_PER_THREAD * 32 * cfg["num_warps"]:
            return (f"a {cfg['BLOCK_M']} x {next_pow2(geom.t * geom.r * geom.s)} x "
                    f"{cfg['BLOCK_N']} accumulator spills over {cfg['num_warps']} warps")
        return super().hard_ok(geom, cfg, device)

    def config_ok(self, geom, cfg, device) -> str | None:
        if cfg["BLOCK_N"] > max(32, 2 * geom.k):
            return f"BLOCK_N={cfg['BLOCK_N']} exceeds the {geom.k} channels"
        return (split_ok(geom, cfg, device, self.grid(geom, cfg))
                or super().config_ok(geom, cfg, device))

    def launch(self, call: GradCall, cfg: Config) -> None:
        g = call.geom
        split = cfg["SPLIT_K"]
        tiles = self.grid(g, cfg)
        with split_slices(call, split, tiles.k_steps) as (per_split, ws, slices):
            launch_kernel(wgrad_depthwise_taps_kernel, (tiles.tiles_n, slices),
                call.dy, call.x, call.out, ws,
                g.gemm_m, g.k, g.kg, g.d, g.h, g.w, *g.out_spatial, *g.stride, *g.pad,
                *g.dilation, per_split, g.k * g.t * g.r * g.s,
                *strides5(call.dy), *strides5(call.x), *strides5(call.out),
                KT=g.t, KR=g.r, KS=g.s, TAPS_P2=next_pow2(g.t * g.r * g.s),
                BLOCK_P=cfg["BLOCK_M"], BLOCK_C=cfg["BLOCK_N"], SPLIT_K=split,
                ONE_PER_GROUP=g.kg == 1, ACC=grad_acc(call), INT64=needs_int64(call),
                num_warps=cfg["num_warps"], num_stages=1,
            )
