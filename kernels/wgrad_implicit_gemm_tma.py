"""Gradient of a stride-1 filter from TMA boxes of dY and X (Hopper).

dW[k, c, tap] = sum over output pixels p of dY[p, k] * X[p + tap offset, c]. At
stride 1 a run of BLOCK_K output pixels along one output row reads, for every tap,
a run of BLOCK_K input pixels along one input row, shifted by the tap's offset. With
dY and the channels_last X seen as 5D tensors [N, D, H, W, C], each step of the
reduction is one [1, 1, 1, BLOCK_K, BLOCK_M] box of dY and one
[1, 1, 1, BLOCK_K, BLOCK_N] box of X, and the copy engine fills what lies past an edge
(the padding, the row's end, the last image) with zeros: no per-pixel index
arithmetic (``wgrad_gemm`` splits every pixel index into n, d, h, w each step). The
boxes are one pixel row high because Triton 3.6 copies a box whose reshape merges two
of its dims into registers when it feeds wgmma's A operand; a one-row box only drops
unit dims and stays in shared memory.

One program per (output x input channel tile, tap, split); the row runs are split over
SPLIT_K programs as in ``wgrad_gemm``: float32 slices added in a fixed order
(``reduce_splits``), no atomics. Where a tensor breaks TMA's rules at run time (an
unaligned view) the call runs through ``wgrad_gemm``'s pointer kernel; launches
holding descriptors are not replayed by the fast path (``launcher.Plan`` refuses them).
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, GradCall, next_pow2
from .common import cdiv, dot_precision, strides5, tile_ids, upcast_dot
from .grad_common import GradGrid
from .implicit_gemm import make_configs
from .implicit_gemm_tma import box_conv_rejects, descriptor, pixels_view
from .launcher import launch_kernel
from .wgrad_gemm import WGRAD_SPLITS, launch_wgrad, split_slices
from .wgrad_pointwise_tma import WgradTmaFamily

_RUNTIME_INTS = ["KTOT", "CTOT", "OD", "OH", "RUNS_W", "R", "S", "pdd", "pdh", "pdw",
                 "dld", "dlh", "dlw", "ITERS_PER_SPLIT", "WS_STRIDE"]


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def wgrad_conv_tma_kernel(
    dy_desc, x_desc, dw_ptr, ws_ptr, KTOT, CTOT, OD, OH, RUNS_W, R, S,
    pdd, pdh, pdw, dld, dlh, dlw, ITERS_PER_SPLIT, WS_STRIDE, swk, swc, swt, swr, sws,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr, PREC: tl.constexpr, UPCAST: tl.constexpr,
):
    pid_m, pid_n = tile_ids(tl.program_id(0), tl.cdiv(KTOT, BLOCK_M), tl.cdiv(CTOT, BLOCK_N),
                            GROUP_M)
    tap = tl.program_id(1)
    pid_k = tl.program_id(2)
    ks = tap % S
    kr = (tap // S) % R
    kt = tap // (S * R)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    run = pid_k * ITERS_PER_SPLIT
    for _ in range(0, ITERS_PER_SPLIT):
        # Row run -> (n, od, oh, first column). Runs past the last image have n >= N:
        # both boxes lie outside the tensors and load as zeros.
        ow0 = (run % RUNS_W) * BLOCK_K
        rest = run // RUNS_W
        oh = rest % OH
        rest = rest // OH
        od = rest % OD
        n = rest // OD
        a = dy_desc.load([n, od, oh, ow0, off_m]).reshape(BLOCK_K, BLOCK_M)
        b = x_desc.load([n, od - pdd + kt * dld, oh - pdh + kr * dlh, ow0 - pdw + ks * dlw,
                         off_n]).reshape(BLOCK_K, BLOCK_N)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a.T, b, acc, input_precision=PREC)
        run += 1
    offs_m = off_m + tl.arange(0, BLOCK_M)
    offs_n = off_n + tl.arange(0, BLOCK_N)
    mask = (offs_m < KTOT)[:, None] & (offs_n < CTOT)[None, :]
    if SPLIT_K == 1:
        w_off = ((offs_m * swk)[:, None] + (offs_n * swc)[None, :]
                 + kt * swt + kr * swr + ks * sws)
        tl.store(dw_ptr + w_off, acc.to(dw_ptr.dtype.element_ty), mask=mask)
    else:
        # Workspace [SPLIT_K, taps, K, C] of reduce_splits.
        ws_off = tap * KTOT * CTOT + (offs_m * CTOT)[:, None] + offs_n[None, :]
        tl.store(ws_ptr + pid_k.to(tl.int64) * WS_STRIDE + ws_off, acc, mask=mask)


def row_runs(geom, run: int) -> tuple[int, int]:
    """(runs of ``run`` output pixels along a row, runs in all)."""
    od, oh, ow = geom.out_spatial
    per_row = cdiv(ow, run)
    return per_row, geom.n * od * oh * per_row


def conv_tma_grid(geom, cfg: Config) -> GradGrid:
    """Output x input channel tiles per tap, reducing over row runs of BLOCK_K pixels."""
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    return GradGrid(m=geom.k, n=geom.c, red=geom.gemm_m, block_m=bm, block_n=bn,
                    tiles_m=cdiv(geom.k, bm), tiles_n=cdiv(geom.c, bn),
                    mult=geom.t * geom.r * geom.s, k_steps=row_runs(geom, bk)[1], k_block=bk)


def launch_wgrad_conv_tma(call: GradCall, cfg: Config) -> None:
    g = call.geom
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    dy_view, x_view = pixels_view(call.dy), pixels_view(call.x)
    if dy_view is None or x_view is None:
        launch_wgrad(call, cfg)  # same tile, pointer loads: correct for any strides
        return
    split = cfg.get("SPLIT_K", 1)
    tiles = conv_tma_grid(g, cfg)
    taps = g.t * g.r * g.s
    runs_w, _ = row_runs(g, bk)
    with split_slices(call, split, tiles.k_steps) as (per_split, ws, slices):
        launch_kernel(wgrad_conv_tma_kernel, (tiles.tiles_m * tiles.tiles_n, taps, slices),
            descriptor(call.dy, dy_view, [1, 1, 1, bk, bm]),
            descriptor(call.x, x_view, [1, 1, 1, bk, bn]),
            call.out, ws, g.k, g.c, g.out_spatial[0], g.out_spatial[1], runs_w, g.r, g.s,
            *g.pad, *g.dilation, per_split, g.k * g.c * taps, *strides5(call.out),
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=cfg.get("GROUP_M", 4), SPLIT_K=split,
            PREC=dot_precision(call), UPCAST=upcast_dot(call),
            num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
        )


# (BLOCK_M over output channels, BLOCK_N over input channels, BLOCK_K pixels of one
# row a step, num_warps, num_stages): boxes are at most 256 a side.
WGRAD_CONV_TMA_TILES = (
    (64, 64, 64, 4, 4), (64, 128, 64, 4, 4), (128, 64, 64, 4, 4), (128, 128, 64, 8, 3),
    (128, 128, 32, 8, 4), (64, 64, 32, 4, 4), (128, 128, 16, 8, 4), (64, 64, 16, 4, 4),
)


class WgradImplicitGemmTmaFamily(WgradTmaFamily):
    name = "wgrad_implicit_gemm_tma"
    overlap_first = True  # launched before dX's kernels when the two overlap
    summary = ("gradient of a stride-1 channels_last filter: dY^T X per tap from TMA "
               "boxes of one pixel row, split with a fixed-order reduction")
    configs = tuple(c for s in WGRAD_SPLITS
                    for c in make_configs(WGRAD_CONV_TMA_TILES, GROUP_M=4, SPLIT_K=s))

    def supports(self, geom) -> str | None:
        return box_conv_rejects(geom, "wgrad_pointwise_tma")

    def grid(self, geom, cfg: Config) -> GradGrid:
        return conv_tma_grid(geom, cfg)

    def config_ok(self, geom, cfg, device) -> str | None:
        ow = geom.out_spatial[2]
        if cfg["BLOCK_K"] > max(16, next_pow2(ow)):
            return f"BLOCK_K={cfg['BLOCK_K']} pixels exceed the {ow}-pixel output rows"
        return super().config_ok(geom, cfg, device)

    def launch(self, call: GradCall, cfg: Config) -> None:
        launch_wgrad_conv_tma(call, cfg)
