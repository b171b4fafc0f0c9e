"""Gradient of the input (dgrad) as an implicit GEMM, 2D and 3D, any groups.

dX[n, c, i] = sum over output channels k of c's group and filter taps r of
dY[n, k, o] * W[k, c, r], where o * stride = i + pad - r * dilation. GEMM view
per group: M = input pixels, N = C/G input channels, reduction = K/G x taps.

A stride-s layer is split into s^D phases by input pixel (i mod s per axis):
every pixel of one phase is reached by the same taps r0, r0 + step, ... (step
= s / gcd(s, dilation)), so a program of one phase walks only those taps and
the tensor cores never multiply the zeros a strided gather would bring. Grid
axis 1 enumerates (group, phase).
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, GradCall, tile_fits
from .common import (
    cdiv,
    dot_precision,
    needs_int64,
    phase_origin,
    phase_tap,
    split_rows,
    strides5,
    tap_steps,
    tile_ids,
    upcast_dot,
)
from .grad_common import GradFamily, GradGrid, grad_acc
from .implicit_gemm import gemm_smem, make_configs
from .launcher import launch_kernel

_RUNTIME_INTS = ["M", "D", "H", "W", "OD", "OH", "OW", "T", "R", "S",
                 "std", "sth", "stw", "pdd", "pdh", "pdw", "dld", "dlh", "dlw",
                 "DQ", "HQ", "WQ", "TI", "RI", "SI", "tstep", "rstep", "sstep", "K_ITERS"]


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def dgrad_kernel(
    dy_ptr, w_ptr, dx_ptr,
    M, CG, KG, GPT, CTOT, KTOT, D, H, W, OD, OH, OW, T, R, S,
    std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
    DQ, HQ, WQ, TI, RI, SI, tstep, rstep, sstep, ddd, ddh, ddw, K_ITERS,
    syn, syc, syd, syh, syw, swk, swc, swt, swr, sws, sxn, sxc, sxd, sxh, sxw,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, PHASES: tl.constexpr, EVEN_K: tl.constexpr, PACKED: tl.constexpr,
    PREC: tl.constexpr, ACC: tl.constexpr, UPCAST: tl.constexpr, INT64: tl.constexpr,
):
    pid = tl.program_id(0)
    grp = tl.program_id(1) // PHASES
    phase = tl.program_id(1) % PHASES
    pw = phase % stw
    ph = (phase // stw) % sth
    pd = phase // (stw * sth)
    # A program's channels belong to GPT consecutive groups (packed: GPT > 1, the weight
    # tile is block diagonal) with CGP input and KGP output channels.
    CGP = GPT * CG
    KGP = GPT * KG
    pid_m, pid_n = tile_ids(pid, tl.cdiv(M, BLOCK_M), tl.cdiv(CGP, BLOCK_N), GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n, qd, qh, qw = split_rows(offs_m, DQ, HQ, WQ)
    idd = qd * std + pd
    ih = qh * sth + ph
    iw = qw * stw + pw
    m_mask = (offs_m < M) & (idd < D) & (ih < H) & (iw < W)
    c_glob = grp * CGP + offs_n
    n_mask = (offs_n < CGP) & (c_glob < CTOT)
    t0, bd = phase_origin(pd, pdd, dld, std, tstep)
    r0, bh = phase_origin(ph, pdh, dlh, sth, rstep)
    s0, bw = phase_origin(pw, pdw, dlw, stw, sstep)
    c_grp = offs_n // CG
    if INT64:
        y_row = n.to(tl.int64) * syn
        w_col = (offs_n % CG).to(tl.int64) * swc
        k_first = (grp * KGP).to(tl.int64)
    else:
        y_row = n * syn
        w_col = (offs_n % CG) * swc
        k_first = grp * KGP
    offs_k0 = tl.arange(0, BLOCK_K)
    k_blocks = tl.cdiv(KGP, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for it in range(0, K_ITERS):
        kb = it % k_blocks
        kt, kr, ks, od, oh, ow, out_ok, tap_ok = phase_tap(
            it // k_blocks, SI, RI, t0, r0, s0, tstep, rstep, sstep, qd, qh, qw, bd, bh, bw,
            ddd, ddh, ddw, T, R, S, OD, OH, OW)
        row_ok = m_mask & out_ok
        offs_k = kb * BLOCK_K + offs_k0
        y_off = y_row + od * syd + oh * syh + ow * syw
        a_ptrs = dy_ptr + y_off[:, None] + ((k_first + offs_k) * syc)[None, :]
        w_off = kt * swt + kr * swr + ks * sws
        b_ptrs = w_ptr + w_off + w_col[None, :] + ((k_first + offs_k) * swk)[:, None]
        if EVEN_K:
            a = tl.load(a_ptrs, mask=row_ok[:, None], other=0.0)
            b = tl.load(b_ptrs, mask=n_mask[None, :] & tap_ok, other=0.0)
        else:
            k_ok = (offs_k < KGP) & (k_first + offs_k < KTOT)
            b_ok = k_ok[:, None] & n_mask[None, :] & tap_ok
            if PACKED:
                b_ok = b_ok & ((offs_k // KG)[:, None] == c_grp[None, :])
            a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            b = tl.load(b_ptrs, mask=b_ok, other=0.0)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PREC, out_dtype=ACC)
    if INT64:
        x_off = n.to(tl.int64) * sxn + idd.to(tl.int64) * sxd + ih * sxh + iw * sxw
        c_off = c_glob.to(tl.int64) * sxc
    else:
        x_off = n * sxn + idd * sxd + ih * sxh + iw * sxw
        c_off = c_glob * sxc
    tl.store(dx_ptr + x_off[:, None] + c_off[None, :], acc.to(dx_ptr.dtype.element_ty),
             mask=m_mask[:, None] & n_mask[None, :])


def phase_rows(geom) -> tuple[int, int, int, int]:
    """(rows a phase's GEMM has, DQ, HQ, WQ): input pixels per phase, rounded up."""
    dq, hq, wq = (cdiv(v, s) for v, s in zip((geom.d, geom.h, geom.w), geom.stride))
    return geom.n * dq * hq * wq, dq, hq, wq


def dgrad_grid(geom, cfg: Config, gpt: int = 1) -> GradGrid:
    """Tiles of input pixels (of one stride phase) x input channels of ``gpt`` groups, per
    (group pack, phase), reducing over the output channels of the taps that reach it."""
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    m = phase_rows(geom)[0]
    visits = tap_steps(geom)[1]
    taps = visits[0] * visits[1] * visits[2]
    phases = geom.stride[0] * geom.stride[1] * geom.stride[2]
    return GradGrid(m=m, n=gpt * geom.cg, red=taps * gpt * geom.kg, block_m=bm, block_n=bn,
                    tiles_m=cdiv(m, bm), tiles_n=cdiv(gpt * geom.cg, bn),
                    mult=cdiv(geom.g, gpt) * phases,
                    k_steps=taps * cdiv(gpt * geom.kg, bk), k_block=bk)


def launch_dgrad(call: GradCall, cfg: Config, gpt: int = 1) -> None:
    """Launch ``dgrad_kernel``; ``gpt`` > 1 packs that many groups into one tile."""
    g = call.geom
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    m, dq, hq, wq = phase_rows(g)
    steps, taps, moves = tap_steps(g)
    phases = g.stride[0] * g.stride[1] * g.stride[2]
    tiles = dgrad_grid(g, cfg, gpt)
    iters = tiles.k_steps
    grid = (tiles.tiles_m * tiles.tiles_n, tiles.mult)
    launch_kernel(dgrad_kernel, grid,
        call.dy, call.w, call.out,
        m, g.cg, g.kg, gpt, g.c, g.k, g.d, g.h, g.w, *g.out_spatial, g.t, g.r, g.s,
        *g.stride, *g.pad, *g.dilation, dq, hq, wq, *taps, *steps, *moves, iters,
        *strides5(call.dy), *strides5(call.w), *strides5(call.out),
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=cfg.get("GROUP_M", 8), PHASES=phases,
        EVEN_K=gpt == 1 and g.kg % bk == 0, PACKED=gpt > 1, PREC=dot_precision(call),
        ACC=grad_acc(call), UPCAST=upcast_dot(call), INT64=needs_int64(call),
        num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
    )


# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages): BLOCK_N tiles input channels,
# BLOCK_K output channels.
DGRAD_TILES = (
    (16, 16, 16, 4, 2), (32, 32, 32, 4, 3), (64, 32, 32, 4, 4), (64, 64, 32, 4, 4),
    (64, 64, 64, 4, 3), (64, 128, 32, 4, 4), (64, 128, 64, 4, 3), (128, 32, 32, 4, 4),
    (128, 64, 32, 4, 4), (128, 64, 64, 4, 3), (128, 64, 64, 8, 4), (128, 128, 32, 4, 4),
    (128, 128, 32, 8, 4), (128, 128, 64, 4, 3), (128, 128, 64, 8, 3), (128, 256, 32, 8, 3),
    (256, 64, 32, 8, 4), (256, 64, 64, 8, 3), (256, 128, 32, 8, 3), (256, 128, 64, 8, 3),
)


class DgradGemmFamily(GradFamily):
    name = "dgrad_gemm"
    summary = "gradient of the input: implicit GEMM per (group, stride phase) over the taps"
    direction = "dgrad"
    configs = make_configs(DGRAD_TILES, GROUP_M=8)

    def smem_bytes(self, geom, cfg: Config) -> int:
        return gemm_smem(geom, cfg)

    def grid(self, geom, cfg: Config) -> GradGrid:
        return dgrad_grid(geom, cfg)

    def config_ok(self, geom, cfg, device) -> str | None:
        m = phase_rows(geom)[0]
        if not tile_fits(cfg["BLOCK_M"], m, 64):
            return f"BLOCK_M={cfg['BLOCK_M']} exceeds the {m} input pixels of a phase"
        if not tile_fits(cfg["BLOCK_N"], geom.cg, 16):
            return f"BLOCK_N={cfg['BLOCK_N']} exceeds the {geom.cg} input channels per group"
        if not tile_fits(cfg["BLOCK_K"], geom.kg, 16):
            return f"BLOCK_K={cfg['BLOCK_K']} exceeds the {geom.kg} output channels per group"
        return super().config_ok(geom, cfg, device)

    def launch(self, call: GradCall, cfg: Config) -> None:
        launch_dgrad(call, cfg)

