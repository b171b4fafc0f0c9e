"""Gradient of the weight (wgrad) as an implicit GEMM with a deterministic split reduction.

dW[k, c, r] = sum over pixels p (N x OD x OH x OW) of dY[n, k, o] * X[n, c, o *
stride - pad + r * dilation]. GEMM view per (group, filter tap): M = K/G output
channels, N = C/G input channels, reduction = pixels. The weight is small and the
reduction long, so the pixels are split over SPLIT_K programs: each writes its
partial tile to a float32 workspace and ``wgrad_reduce_kernel`` adds the slices
in a fixed order. No atomics: the result does not depend on scheduling.
"""

from __future__ import annotations

from contextlib import contextmanager

import triton
import triton.language as tl

from .base import Config, GradCall, next_pow2, prev_pow2, tile_fits
from .common import (
    REDUCE_PROGRAMS,
    cdiv,
    dot_precision,
    needs_int64,
    pixel_tap_rows,
    strides5,
    tile_ids,
    upcast_dot,
)
from .dependent import dependent_args, wait_for_prior
from .grad_common import GradFamily, GradGrid, grad_acc
from .implicit_gemm import gemm_smem, make_configs
from .launcher import launch_kernel, workspace
from .splitk import split_rejects

_RUNTIME_INTS = ["P", "D", "H", "W", "OD", "OH", "OW", "T", "R", "S",
                 "std", "sth", "stw", "pdd", "pdh", "pdw", "dld", "dlh", "dlw",
                 "ITERS_PER_SPLIT", "WS_STRIDE"]
# Most workspace a split may ask for; larger splits are pruned.
MAX_WORKSPACE_BYTES = 1 << 30
# Workspace values a reduction program loads a step (at most 32 a thread).
REDUCE_TILE = 8192


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def wgrad_kernel(
    dy_ptr, x_ptr, dw_ptr, ws_ptr,
    P, CG, KG, GPT, CTOT, KTOT, D, H, W, OD, OH, OW, T, R, S,
    std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
    ITERS_PER_SPLIT, WS_STRIDE,
    syn, syc, syd, syh, syw, sxn, sxc, sxd, sxh, sxw, swk, swc, swt, swr, sws,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr,
    PREC: tl.constexpr, ACC: tl.constexpr, UPCAST: tl.constexpr, INT64: tl.constexpr,
):
    pid = tl.program_id(0)
    trs = T * R * S
    grp = tl.program_id(1) // trs
    tap = tl.program_id(1) % trs
    pid_k = tl.program_id(2)
    ks = tap % S
    kr = (tap // S) % R
    kt = tap // (S * R)
    # A program's channels belong to GPT consecutive groups (packed: GPT > 1; only the
    # block-diagonal part of its tile is a weight gradient).
    KGP = GPT * KG
    CGP = GPT * CG
    pid_m, pid_n = tile_ids(pid, tl.cdiv(KGP, BLOCK_M), tl.cdiv(CGP, BLOCK_N), GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    k_glob = grp * KGP + offs_m
    c_glob = grp * CGP + offs_n
    m_mask = (offs_m < KGP) & (k_glob < KTOT)
    n_mask = (offs_n < CGP) & (c_glob < CTOT)
    c_loc = offs_n % CG
    if INT64:
        y_col = k_glob.to(tl.int64) * syc
        x_col = c_glob.to(tl.int64) * sxc
    else:
        y_col = k_glob * syc
        x_col = c_glob * sxc
    offs_p0 = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for i in range(0, ITERS_PER_SPLIT):
        offs_p = (pid_k * ITERS_PER_SPLIT + i) * BLOCK_K + offs_p0
        n, od, oh, ow, p_ok, idd, ih, iw, x_ok = pixel_tap_rows(
            offs_p, P, OD, OH, OW, kt, kr, ks, std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
            D, H, W)
        if INT64:
            n = n.to(tl.int64)
        y_row = n * syn + od * syd + oh * syh + ow * syw
        x_row = n * sxn + idd * sxd + ih * sxh + iw * sxw
        a = tl.load(dy_ptr + y_row[None, :] + y_col[:, None],
                    mask=m_mask[:, None] & p_ok[None, :], other=0.0)
        b = tl.load(x_ptr + x_row[:, None] + x_col[None, :],
                    mask=x_ok[:, None] & n_mask[None, :], other=0.0)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PREC, out_dtype=ACC)
    mask = m_mask[:, None] & n_mask[None, :] & ((offs_m // KG)[:, None] == (offs_n // CG)[None, :])
    if SPLIT_K == 1:
        w_off = (k_glob * swk)[:, None] + (c_loc * swc)[None, :] + kt * swt + kr * swr + ks * sws
        tl.store(dw_ptr + w_off, acc.to(dw_ptr.dtype.element_ty), mask=mask)
    else:
        # Workspace [SPLIT_K, T*R*S, K, C/G], contiguous: a tile's rows are contiguous runs.
        ws_off = tap * (WS_STRIDE // trs) + (k_glob * CG)[:, None] + c_loc[None, :]
        tl.store(ws_ptr + pid_k.to(tl.int64) * WS_STRIDE + ws_off, acc, mask=mask)


@triton.jit(do_not_specialize=["SPLIT"])
def wgrad_reduce_kernel(ws_ptr, dw_ptr, TOTAL, SPLIT, swk, swc, swt, swr, sws,
                        KC: tl.constexpr, CG: tl.constexpr, R: tl.constexpr, S: tl.constexpr,
                        BLOCK: tl.constexpr, SLICES: tl.constexpr, ACC: tl.constexpr,
                        PRIOR: tl.constexpr):
    """dW = sum of the SPLIT workspace slices ([SPLIT, taps, K, C/G]): SLICES slices of
    BLOCK elements a step, summed over the slices once at the end. The layout fixes the
    order of additions, so the result does not depend on scheduling. PRIOR: launched as
    the dependent of the kernel that wrote the slices (``dependent``). The divisors of the
    index arithmetic are constants: divisions by run-time values took 0.8-2.1 us of
    1.5-4 us passes on the H100 (validation/results/split_reduction_h100/, call 189)."""
    wait_for_prior(PRIOR)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < TOTAL
    rows = tl.arange(0, SLICES)
    acc = tl.zeros((SLICES, BLOCK), dtype=ACC)
    # SLICES loads in flight a step: a small dW (depthwise, stem) has few programs, and
    # one slice a step left them latency-bound over hundreds of slices.
    for i in range(0, SPLIT, SLICES):
        sl = i + rows
        acc += tl.load(ws_ptr + sl.to(tl.int64)[:, None] * TOTAL + offs[None, :],
                       mask=(sl < SPLIT)[:, None] & mask[None, :], other=0.0)
    total = tl.sum(acc, axis=0)
    tap = offs // KC
    kc = offs % KC
    c = kc % CG
    k = kc // CG
    ks = tap % S
    kr = (tap // S) % R
    kt = tap // (S * R)
    tl.store(dw_ptr + k * swk + c * swc + kt * swt + kr * swr + ks * sws,
             total.to(dw_ptr.dtype.element_ty), mask=mask)


def reduce_tile(total: int, split: int) -> tuple[int, int, int]:
    """(BLOCK elements, SLICES slices, num_warps) of a reduction program: blocks small
    enough for about ``REDUCE_PROGRAMS`` programs (a depthwise dW has a few hundred elements), every
    slice in one step up to REDUCE_TILE values. On the H100 a 288-element dW of 483
    slices took 24 us as 18 programs of 16 elements walking 128 slices a step (Nsight
    Compute, validation/results/depthwise_wgrad_rows_h100/)."""
    block = max(2, min(512, prev_pow2(total // REDUCE_PROGRAMS)))
    slices = min(next_pow2(split), max(4, REDUCE_TILE // block))
    return block, slices, 8 if block * slices >= 4096 else 4


def reduce_splits(call: GradCall, ws, split: int) -> None:
    """Add the workspace slices into dW (shared by every split wgrad family)."""
    g = call.geom
    total = g.k * g.cg * g.t * g.r * g.s
    block, slices, warps = reduce_tile(total, split)
    launch_kernel(wgrad_reduce_kernel, (cdiv(total, block),),
                  ws, call.out, total, split, *strides5(call.out), KC=g.k * g.cg, CG=g.cg,
                  R=g.r, S=g.s, BLOCK=block, SLICES=slices, ACC=grad_acc(call),
                  num_warps=warps, **dependent_args(call.out.device))


def split_steps(k_steps, split):
    """(reduction steps one slice walks, slices launched) of ``k_steps`` steps split
    ``split`` ways: slices that would get no steps are left out. Elementwise on numpy
    arrays too (the model's launch-grid features)."""
    per_split = -(-k_steps // split)
    return per_split, -(-k_steps // (per_split + (per_split == 0)))


@contextmanager
def split_slices(call: GradCall, split: int, k_steps: int):
    """(reduction steps one slice walks, where the partial dWs go, slices to launch) for
    a wgrad launch split ``split`` ways: a float32 workspace whose slices are added into
    dW in a fixed order when the launch returns (``reduce_splits``), or dW itself when not
    split. Slices that would get no steps are not launched (a short reduction split many
    ways), so the launch grid takes the third value, not ``split``."""
    per_split, slices = split_steps(k_steps, split)
    slices = max(slices, 1)
    ws = split_workspace(call, slices) if split > 1 else call.out
    yield per_split, ws, slices
    if split > 1:
        reduce_splits(call, ws, slices)


def split_workspace(call: GradCall, split: int):
    """Float32 (float64 for float64 operands) partial-sum slices of dW."""
    import torch

    g = call.geom
    dtype = torch.float64 if g.dtype == "float64" else torch.float32
    return workspace((split, g.k * g.cg * g.t * g.r * g.s), call.dy.device, dtype)


def wgrad_grid(geom, cfg: Config, gpt: int = 1) -> GradGrid:
    """Tiles of output x input channels of ``gpt`` groups, per (group pack, tap), reducing
    over the output pixels."""
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    return GradGrid(m=gpt * geom.kg, n=gpt * geom.cg, red=geom.gemm_m, block_m=bm, block_n=bn,
                    tiles_m=cdiv(gpt * geom.kg, bm), tiles_n=cdiv(gpt * geom.cg, bn),
                    mult=cdiv(geom.g, gpt) * geom.t * geom.r * geom.s,
                    k_steps=cdiv(geom.gemm_m, bk), k_block=bk)


def launch_wgrad(call: GradCall, cfg: Config, gpt: int = 1) -> None:
    """Launch ``wgrad_kernel`` (+ the reduction); ``gpt`` > 1 packs that many groups a tile."""
    g = call.geom
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    split = cfg.get("SPLIT_K", 1)
    p = g.gemm_m
    tiles = wgrad_grid(g, cfg, gpt)
    trs = g.t * g.r * g.s
    with split_slices(call, split, tiles.k_steps) as (per_split, ws, slices):
        launch_kernel(wgrad_kernel, (tiles.tiles_m * tiles.tiles_n, tiles.mult, slices),
            call.dy, call.x, call.out, ws,
            p, g.cg, g.kg, gpt, g.c, g.k, g.d, g.h, g.w, *g.out_spatial, g.t, g.r, g.s,
            *g.stride, *g.pad, *g.dilation, per_split, g.k * g.cg * trs,
            *strides5(call.dy), *strides5(call.x), *strides5(call.out),
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=cfg.get("GROUP_M", 4),
            SPLIT_K=split, PREC=dot_precision(call), ACC=grad_acc(call),
            UPCAST=upcast_dot(call), INT64=needs_int64(call), num_warps=cfg["num_warps"],
            num_stages=cfg["num_stages"],
        )


def split_ok(geom, cfg: Config, device, grid: GradGrid) -> str | None:
    """Splitting pays only while programs are too few for the SMs and slices stay long."""
    split = cfg.get("SPLIT_K", 1)
    if split == 1:
        return None
    why = split_rejects(grid.programs, grid.k_steps, split, device, min_run=4)
    if why is not None:
        return why
    ws = split * geom.k * geom.cg * geom.t * geom.r * geom.s * 4
    if ws > MAX_WORKSPACE_BYTES:
        return f"SPLIT_K={split} needs {ws >> 20} MiB of workspace"
    return None


# (BLOCK_M over output channels, BLOCK_N over input channels, BLOCK_K over pixels,
# num_warps, num_stages)
WGRAD_TILES = (
    (16, 16, 64, 4, 3), (32, 32, 64, 4, 3), (64, 64, 32, 4, 4), (64, 64, 64, 4, 3),
    (64, 128, 64, 4, 3), (128, 64, 64, 4, 3), (128, 128, 32, 8, 4), (128, 128, 64, 8, 3),
)
WGRAD_SPLITS = (1, 4, 16, 64)


class WgradGemmFamily(GradFamily):
    name = "wgrad_gemm"
    summary = ("gradient of the weight: implicit GEMM per (group, tap) over pixels, split "
               "with a fixed-order reduction")
    direction = "wgrad"
    configs = tuple(c for s in WGRAD_SPLITS for c in make_configs(WGRAD_TILES, GROUP_M=4,
                                                                  SPLIT_K=s))

    def smem_bytes(self, geom, cfg: Config) -> int:
        return gemm_smem(geom, cfg)

    def grid(self, geom, cfg: Config) -> GradGrid:
        return wgrad_grid(geom, cfg)

    def config_ok(self, geom, cfg, device) -> str | None:
        if not tile_fits(cfg["BLOCK_M"], geom.kg, 16):
            return f"BLOCK_M={cfg['BLOCK_M']} exceeds the {geom.kg} output channels per group"
        if not tile_fits(cfg["BLOCK_N"], geom.cg, 16):
            return f"BLOCK_N={cfg['BLOCK_N']} exceeds the {geom.cg} input channels per group"
        return (split_ok(geom, cfg, device, self.grid(geom, cfg))
                or super().config_ok(geom, cfg, device))

    def launch(self, call: GradCall, cfg: Config) -> None:
        launch_wgrad(call, cfg)
