"""General implicit-GEMM convolution (2D and 3D, NDHWC-friendly), dense layers.

GEMM view per group: M = N*OD*OH*OW output pixels, N = K/G output channels,
K = T*R*S*C/G. One flattened loop walks (t, r, s, channel-block) so Triton's
software pipeline spans the whole reduction even when C is small. Strides are
runtime arguments: channels_last and contiguous inputs are read in place.
The same kernel serves the grouped (program axis 1 = group) and split-K
(program axis 2 = K slice) families.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .base import Config, ConvCall, KernelFamily, tile_fits
from .common import (
    cdiv,
    dot_precision,
    first_step,
    needs_int64,
    next_step,
    out_args,
    split_rows,
    store_tile,
    strides5,
    tap_at,
    tap_origin,
    tile_ids,
    upcast_dot,
    weight_strides,
)
from .launcher import launch_kernel

# CG and KG stay specialised: their divisibility by 16 is what proves a group's
# channel offset aligned, which 16-byte (cp.async) operand loads need.
_RUNTIME_INTS = ["M", "D", "H", "W", "OD", "OH", "OW", "T", "R", "S",
                 "std", "sth", "stw", "pdd", "pdh", "pdw", "dld", "dlh", "dlw",
                 "K_ITERS", "ITERS_PER_SPLIT"]


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def igemm_kernel(
    x_ptr, w_ptr, out_ptr, syn, syc, syd, syh, syw,
    bias_ptr, res_ptr, srn, src, srd, srh, srw, ws_ptr,
    M, CG, KG, D, H, W, OD, OH, OW, T, R, S,
    std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
    sxn, sxc, sxd, sxh, sxw, swk, swc, swt, swr, sws,
    K_ITERS, ITERS_PER_SPLIT,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr, EVEN_C: tl.constexpr,
    HAS_DEPTH: tl.constexpr, ACT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr,
    PREC: tl.constexpr, UPCAST: tl.constexpr, INT64: tl.constexpr,
):
    pid = tl.program_id(0)
    grp = tl.program_id(1)
    pid_k = tl.program_id(2)
    pid_m, pid_n = tile_ids(pid, tl.cdiv(M, BLOCK_M), tl.cdiv(KG, BLOCK_N), GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = offs_m < M
    n_mask = offs_n < KG
    n, od, oh, ow = split_rows(offs_m, OD, OH, OW)
    id0 = od * std - pdd
    ih0 = oh * sth - pdh
    iw0 = ow * stw - pdw
    c_first = grp * CG
    k_glob = grp * KG + offs_n
    if INT64:
        x_row = n.to(tl.int64) * sxn + c_first.to(tl.int64) * sxc
        w_col = k_glob.to(tl.int64) * swk
    else:
        x_row = n * sxn + c_first * sxc
        w_col = k_glob * swk
    x_origin = tap_origin(x_row, id0, ih0, iw0, sxd, sxh, sxw, HAS_DEPTH)
    offs_c0 = tl.arange(0, BLOCK_K)
    c_blocks = tl.cdiv(CG, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # Loop bounds stay independent of program ids (the CPU interpreter cannot
    # take a program-id tensor as a range bound); split K slices are masked.
    it = pid_k * ITERS_PER_SPLIT
    cb, ks, kr, kt = first_step(it, c_blocks, R, S)
    for _ in range(0, ITERS_PER_SPLIT):
        row_ok, x_off, w_off = tap_at(
            ks, kr, kt, m_mask, D, H, W, x_origin, id0, ih0, iw0, dld, dlh, dlw,
            sxd, sxh, sxw, w_col, swt, swr, sws, HAS_DEPTH)
        col_ok = n_mask
        if SPLIT_K > 1:
            row_ok = row_ok & (it < K_ITERS)
            col_ok = col_ok & (it < K_ITERS)
        offs_c = cb * BLOCK_K + offs_c0
        a_ptrs = x_ptr + x_off[:, None] + (offs_c * sxc)[None, :]
        b_ptrs = w_ptr + w_off[None, :] + (offs_c * swc)[:, None]
        if EVEN_C:
            a = tl.load(a_ptrs, mask=row_ok[:, None], other=0.0)
            b = tl.load(b_ptrs, mask=col_ok[None, :], other=0.0)
        else:
            c_ok = offs_c < CG
            a = tl.load(a_ptrs, mask=row_ok[:, None] & c_ok[None, :], other=0.0)
            b = tl.load(b_ptrs, mask=c_ok[:, None] & col_ok[None, :], other=0.0)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PREC)
        cb, ks, kr, kt = next_step(cb, ks, kr, kt, c_blocks, R, S)
        it += 1
    if SPLIT_K == 1:
        store_tile(acc, n, od, oh, ow, m_mask, k_glob, n_mask,
                   out_ptr, syn, syc, syd, syh, syw, bias_ptr, res_ptr, srn, src, srd, srh, srw,
                   HAS_BIAS, HAS_RES, ACT, INT64)
    else:
        # Partial sums go to a [SPLIT_K, M, K] float32 workspace; a second pass
        # adds them in a fixed order, so the result does not depend on timing.
        ktot = KG * tl.num_programs(1)
        ws_off = (pid_k * M + offs_m).to(tl.int64)[:, None] * ktot + k_glob[None, :]
        tl.store(ws_ptr + ws_off, acc, mask=m_mask[:, None] & n_mask[None, :])


def k_iters(call: ConvCall, block_k: int) -> int:
    g = call.geom
    return g.t * g.r * g.s * cdiv(g.cg, block_k)


def launch_igemm(call: ConvCall, cfg: Config, workspace: torch.Tensor | None = None) -> None:
    """Launch ``igemm_kernel``; with SPLIT_K > 1 it fills ``workspace`` instead of the output."""
    g = call.geom
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    split = cfg.get("SPLIT_K", 1)
    od, oh, ow = g.out_spatial
    iters = k_iters(call, bk)
    per_split = cdiv(iters, split)
    grid = (cdiv(g.gemm_m, bm) * cdiv(g.kg, bn), g.g, split)
    pads, dils = g.pad, g.dilation
    if call.flip_taps:
        # Tap i of the reversed filter is stored tap (taps - 1 - i): walking the stored
        # taps in order with negated dilation and padding visits the same input pixels.
        pads = tuple(p - d * (f - 1) for p, d, f in zip(g.pad, g.dilation, (g.t, g.r, g.s)))
        dils = tuple(-d for d in g.dilation)
    launch_kernel(igemm_kernel, grid,
        call.x, call.w, *out_args(call), workspace if workspace is not None else call.out,
        g.gemm_m, g.cg, g.kg, g.d, g.h, g.w, od, oh, ow, g.t, g.r, g.s,
        *g.stride, *pads, *dils, *strides5(call.x), *weight_strides(call),
        iters, per_split,
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=cfg.get("GROUP_M", 8), SPLIT_K=split,
        EVEN_C=g.cg % bk == 0, HAS_DEPTH=g.has_depth, ACT=call.activation,
        HAS_BIAS=call.bias is not None, HAS_RES=call.residual is not None,
        PREC=dot_precision(call), UPCAST=upcast_dot(call),
        INT64=needs_int64(call), num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
    )


def gemm_smem(geom, cfg: Config) -> int:
    """Pipelined A and B tiles in shared memory.

    Triton 3.6 allocates one buffer per stage (an fp32 256x64x64 tile at 3 stages
    asks for 3 x 80 KiB on an H100), so the estimate counts all of them.
    """
    per_stage = (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * cfg["BLOCK_K"] * geom.elem_bytes
    return cfg["num_stages"] * per_stage


def tiles_fit(geom, cfg: Config) -> str | None:
    """Prune tiles far larger than the problem: they only add padding waste."""
    if not tile_fits(cfg["BLOCK_M"], geom.gemm_m, 64):
        return f"BLOCK_M={cfg['BLOCK_M']} exceeds the {geom.gemm_m} output pixels"
    if not tile_fits(cfg["BLOCK_N"], geom.kg, 32):
        return f"BLOCK_N={cfg['BLOCK_N']} exceeds the {geom.kg} output channels per group"
    if not tile_fits(cfg["BLOCK_K"], geom.cg, 32):
        return f"BLOCK_K={cfg['BLOCK_K']} exceeds the {geom.cg} input channels per group"
    return None


def make_configs(tiles, **fixed: int) -> tuple[Config, ...]:
    return tuple(
        Config(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=wp, num_stages=st, **fixed)
        for bm, bn, bk, wp, st in tiles
    )


# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)
DENSE_TILES = (
    (32, 32, 32, 4, 3), (32, 64, 64, 4, 3), (32, 128, 64, 4, 3),
    (64, 32, 32, 4, 4), (64, 64, 32, 4, 4), (64, 64, 64, 4, 3), (64, 64, 64, 4, 4),
    (64, 128, 32, 4, 4), (64, 128, 64, 4, 3), (64, 128, 64, 4, 4), (64, 256, 32, 8, 3),
    (64, 256, 64, 8, 3),
    (128, 32, 32, 4, 4), (128, 32, 64, 4, 3), (128, 64, 32, 4, 4), (128, 64, 64, 4, 3),
    (128, 64, 64, 8, 4), (128, 128, 32, 4, 4), (128, 128, 32, 8, 4), (128, 128, 64, 4, 3),
    (128, 128, 64, 8, 3), (128, 128, 64, 8, 4), (128, 256, 32, 8, 3), (128, 256, 64, 8, 3),
    (256, 32, 32, 4, 4), (256, 64, 32, 4, 4), (256, 64, 32, 8, 4), (256, 64, 64, 8, 3),
    (256, 128, 32, 8, 3), (256, 128, 32, 8, 4), (256, 128, 64, 8, 3),
    (64, 64, 128, 4, 3), (128, 64, 128, 8, 3), (128, 128, 128, 8, 3), (256, 128, 64, 8, 4),
)


class ImplicitGemmFamily(KernelFamily):
    name = "implicit_gemm"
    summary = "implicit GEMM over (t, r, s, channel block), dense convolutions, 2D and 3D"
    configs = make_configs(DENSE_TILES, GROUP_M=8)

    def supports(self, geom) -> str | None:
        if geom.g != 1:
            return "grouped convolutions go to grouped_gemm / grouped_direct"
        return None

    def smem_bytes(self, geom, cfg: Config) -> int:
        return gemm_smem(geom, cfg)

    def config_ok(self, geom, cfg, device) -> str | None:
        return tiles_fit(geom, cfg) or super().config_ok(geom, cfg, device)

    def launch(self, call: ConvCall, cfg: Config) -> None:
        launch_igemm(call, cfg)
