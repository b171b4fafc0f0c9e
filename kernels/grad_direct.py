"""Gradients of depthwise and few-channel grouped convolutions with fused multiply-adds.

With one to sixteen channels a group the per-group GEMMs are too thin for the
tensor cores (a 16-wide MMA tile would be mostly padding), so both gradients
run as FMA over channels, NHWC channels contiguous in each load:

- dgrad: a program computes BLOCK_M input pixels of one stride phase (see
  ``dgrad_gemm``) x BLOCK_N input channels; each tap and each of the group's
  K/G output channels adds dY x W.
- wgrad: a program owns BLOCK_N (output channel, input channel of its group)
  pairs of one filter tap and reduces dY x X over BLOCK_M pixels at a time;
  pixels are split over SPLIT_K programs and the slices added in a fixed order
  (``wgrad_gemm.reduce_splits``).
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, GradCall
from .common import (
    cdiv,
    needs_int64,
    phase_origin,
    phase_tap,
    pixel_tap_rows,
    split_rows,
    strides5,
    tap_steps,
)
from .dgrad_gemm import phase_rows
from .grad_common import GradFamily, GradGrid, grad_acc
from .launcher import launch_kernel
from .wgrad_gemm import split_ok, split_slices

_RUNTIME_INTS = ["M", "P", "D", "H", "W", "OD", "OH", "OW", "T", "R", "S",
                 "std", "sth", "stw", "pdd", "pdh", "pdw", "dld", "dlh", "dlw",
                 "DQ", "HQ", "WQ", "TAPS", "TI", "RI", "SI", "tstep", "rstep", "sstep",
                 "ITERS_PER_SPLIT", "WS_STRIDE"]
# Largest channels a group either direct kernel takes: beyond it the GEMM families win.
MAX_GROUP_CHANNELS = 16


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def dgrad_direct_kernel(
    dy_ptr, w_ptr, dx_ptr,
    M, CG, KG, CTOT, D, H, W, OD, OH, OW, T, R, S,
    std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
    DQ, HQ, WQ, TAPS, TI, RI, SI, tstep, rstep, sstep, ddd, ddh, ddw,
    syn, syc, syd, syh, syw, swk, swc, swt, swr, sws, sxn, sxc, sxd, sxh, sxw,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PHASES: tl.constexpr,
    ACC: tl.constexpr, INT64: tl.constexpr,
):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_c = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    phase = tl.program_id(2)
    pw = phase % stw
    ph = (phase // stw) % sth
    pd = phase // (stw * sth)
    n, qd, qh, qw = split_rows(offs_m, DQ, HQ, WQ)
    idd = qd * std + pd
    ih = qh * sth + ph
    iw = qw * stw + pw
    m_mask = (offs_m < M) & (idd < D) & (ih < H) & (iw < W)
    c_mask = offs_c < CTOT
    k_first = (offs_c // CG) * KG
    w_col = k_first * swk + (offs_c % CG) * swc
    if INT64:
        n = n.to(tl.int64)
        k_first = k_first.to(tl.int64)
        w_col = w_col.to(tl.int64)
    t0, bd = phase_origin(pd, pdd, dld, std, tstep)
    r0, bh = phase_origin(ph, pdh, dlh, sth, rstep)
    s0, bw = phase_origin(pw, pdw, dlw, stw, sstep)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for tap in range(0, TAPS):
        kt, kr, ks, od, oh, ow, out_ok, tap_ok = phase_tap(
            tap, SI, RI, t0, r0, s0, tstep, rstep, sstep, qd, qh, qw, bd, bh, bw,
            ddd, ddh, ddw, T, R, S, OD, OH, OW)
        row_ok = m_mask & out_ok
        y_off = n * syn + od * syd + oh * syh + ow * syw
        w_tap = w_col + kt * swt + kr * swr + ks * sws
        for j in range(0, KG):
            dy = tl.load(dy_ptr + y_off[:, None] + ((k_first + j) * syc)[None, :],
                         mask=row_ok[:, None] & c_mask[None, :], other=0.0)
            wv = tl.load(w_ptr + w_tap + j * swk, mask=c_mask & tap_ok, other=0.0)
            acc += dy.to(ACC) * wv.to(ACC)[None, :]
    x_off = n * sxn + idd * sxd + ih * sxh + iw * sxw
    tl.store(dx_ptr + x_off[:, None] + (offs_c * sxc)[None, :], acc.to(dx_ptr.dtype.element_ty),
             mask=m_mask[:, None] & c_mask[None, :])


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def wgrad_direct_kernel(
    dy_ptr, x_ptr, dw_ptr, ws_ptr,
    P, CG, KG, QTOT, D, H, W, OD, OH, OW, T, R, S,
    std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw, ITERS_PER_SPLIT, WS_STRIDE,
    syn, syc, syd, syh, syw, sxn, sxc, sxd, sxh, sxw, swk, swc, swt, swr, sws,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SPLIT_K: tl.constexpr,
    ACC: tl.constexpr, INT64: tl.constexpr,
):
    offs_q = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    tap = tl.program_id(1)
    pid_k = tl.program_id(2)
    ks = tap % S
    kr = (tap // S) % R
    kt = tap // (S * R)
    q_mask = offs_q < QTOT
    k = offs_q // CG
    cl = offs_q % CG
    c = (k // KG) * CG + cl
    y_col = k * syc
    x_col = c * sxc
    offs_p0 = tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for i in range(0, ITERS_PER_SPLIT):
        offs_p = (pid_k * ITERS_PER_SPLIT + i) * BLOCK_M + offs_p0
        n, od, oh, ow, p_ok, idd, ih, iw, x_ok = pixel_tap_rows(
            offs_p, P, OD, OH, OW, kt, kr, ks, std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
            D, H, W)
        if INT64:
            n = n.to(tl.int64)
        dy = tl.load(dy_ptr + (n * syn + od * syd + oh * syh + ow * syw)[:, None] + y_col[None, :],
                     mask=p_ok[:, None] & q_mask[None, :], other=0.0)
        xv = tl.load(x_ptr + (n * sxn + idd * sxd + ih * sxh + iw * sxw)[:, None] + x_col[None, :],
                     mask=x_ok[:, None] & q_mask[None, :], other=0.0)
        acc += dy.to(ACC) * xv.to(ACC)
    total = tl.sum(acc, axis=0)
    if SPLIT_K == 1:
        w_off = k * swk + cl * swc + kt * swt + kr * swr + ks * sws
        tl.store(dw_ptr + w_off, total.to(dw_ptr.dtype.element_ty), mask=q_mask)
    else:
        # Workspace [SPLIT_K, T*R*S, K, C/G] as in wgrad_gemm: q = k * C/G + c.
        tl.store(ws_ptr + pid_k * WS_STRIDE + tap * QTOT + offs_q, total, mask=q_mask)


class DgradDirectFamily(GradFamily):
    name = "dgrad_direct"
    summary = "gradient of the input for depthwise / few-channel groups: FMA per stride phase"
    direction = "dgrad"
    configs = tuple(Config(BLOCK_M=bm, BLOCK_N=bn, num_warps=wp, num_stages=1)
                    for bm, bn, wp in ((16, 32, 4), (32, 32, 4), (32, 64, 4), (64, 32, 4),
                                       (64, 64, 4), (64, 128, 4), (128, 32, 4), (128, 64, 4),
                                       (128, 64, 8), (128, 128, 8), (256, 64, 8)))

    def supports(self, geom) -> str | None:
        if geom.g == 1:
            return "dense convolutions go to dgrad_gemm"
        if geom.cg > MAX_GROUP_CHANNELS or geom.kg > MAX_GROUP_CHANNELS:
            return (f"{geom.cg} in / {geom.kg} out channels a group: more than "
                    f"{MAX_GROUP_CHANNELS}, dgrad_gemm's tiles fill")
        return None

    def grid(self, geom, cfg: Config) -> GradGrid:
        """Input pixels of a phase x all input channels, per phase; FMA over the output
        channels of the taps that reach the phase."""
        bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
        m = phase_rows(geom)[0]
        visits = tap_steps(geom)[1]
        red = visits[0] * visits[1] * visits[2] * geom.kg
        return GradGrid(m=m, n=geom.c, red=red, block_m=bm, block_n=bn,
                        tiles_m=cdiv(m, bm), tiles_n=cdiv(geom.c, bn),
                        mult=geom.stride[0] * geom.stride[1] * geom.stride[2], k_steps=red,
                        k_block=1, fma=True)

    def config_ok(self, geom, cfg, device) -> str | None:
        m = phase_rows(geom)[0]
        if cfg["BLOCK_M"] > max(32, 2 * m):
            return f"BLOCK_M={cfg['BLOCK_M']} exceeds the {m} input pixels of a phase"
        if cfg["BLOCK_N"] > max(32, 2 * geom.c):
            return f"BLOCK_N={cfg['BLOCK_N']} exceeds the {geom.c} input channels"
        return super().config_ok(geom, cfg, device)

    def launch(self, call: GradCall, cfg: Config) -> None:
        g = call.geom
        bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
        m, dq, hq, wq = phase_rows(g)
        steps, taps, moves = tap_steps(g)
        phases = g.stride[0] * g.stride[1] * g.stride[2]
        tiles = self.grid(g, cfg)
        grid = (tiles.tiles_m, tiles.tiles_n, tiles.mult)
        launch_kernel(dgrad_direct_kernel, grid,
            call.dy, call.w, call.out,
            m, g.cg, g.kg, g.c, g.d, g.h, g.w, *g.out_spatial, g.t, g.r, g.s,
            *g.stride, *g.pad, *g.dilation, dq, hq, wq, taps[0] * taps[1] * taps[2], *taps,
            *steps, *moves, *strides5(call.dy), *strides5(call.w), *strides5(call.out),
            BLOCK_M=bm, BLOCK_N=bn, PHASES=phases, ACC=grad_acc(call),
            INT64=needs_int64(call), num_warps=cfg["num_warps"], num_stages=1,
        )


class WgradDirectFamily(GradFamily):
    name = "wgrad_direct"
    summary = ("gradient of the weight for depthwise / few-channel groups: FMA reduction "
               "over pixels, split with a fixed-order reduction")
    direction = "wgrad"
    configs = tuple(Config(BLOCK_M=bm, BLOCK_N=bn, SPLIT_K=sk, num_warps=4, num_stages=1)
                    for sk in (1, 8, 32, 128)
                    for bm, bn in ((32, 32), (32, 64), (64, 32), (64, 64), (128, 32), (32, 128)))

    def supports(self, geom) -> str | None:
        if geom.g == 1:
            return "dense convolutions go to wgrad_gemm"
        if geom.cg > MAX_GROUP_CHANNELS:
            return (f"{geom.cg} input channels a group: more than {MAX_GROUP_CHANNELS}, "
                    "wgrad_gemm's tiles fill")
        return None

    def config_ok(self, geom, cfg, device) -> str | None:
        q = geom.k * geom.cg
        if cfg["BLOCK_N"] > max(32, 2 * q):
            return f"BLOCK_N={cfg['BLOCK_N']} exceeds the {q} weight rows"
        return (split_ok(geom, cfg, device, self.grid(geom, cfg))
                or super().config_ok(geom, cfg, device))

    def grid(self, geom, cfg: Config) -> GradGrid:
        """Blocks of the K x C/g weight rows, per tap; each program walks all output pixels
        in BLOCK_M steps (FMA)."""
        bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
        q = geom.k * geom.cg
        return GradGrid(m=1, n=q, red=geom.gemm_m, block_m=1, block_n=bn, tiles_m=1,
                        tiles_n=cdiv(q, bn), mult=geom.t * geom.r * geom.s,
                        k_steps=cdiv(geom.gemm_m, bm), k_block=bm, fma=True)

    def launch(self, call: GradCall, cfg: Config) -> None:
        g = call.geom
        bm, bn, split = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["SPLIT_K"]
        q = g.k * g.cg
        trs = g.t * g.r * g.s
        tiles = self.grid(g, cfg)
        with split_slices(call, split, tiles.k_steps) as (per_split, ws, slices):
            launch_kernel(wgrad_direct_kernel, (tiles.tiles_n, tiles.mult, slices),
                call.dy, call.x, call.out, ws,
                g.gemm_m, g.cg, g.kg, q, g.d, g.h, g.w, *g.out_spatial, g.t, g.r, g.s,
                *g.stride, *g.pad, *g.dilation, per_split, q * trs,
                *strides5(call.dy), *strides5(call.x), *strides5(call.out),
                BLOCK_M=bm, BLOCK_N=bn, SPLIT_K=split, ACC=grad_acc(call),
                INT64=needs_int64(call), num_warps=cfg["num_warps"], num_stages=1,
            )
