"""Gradient of a few-channel grouped filter, a filter row's taps in one MMA tile.

``wgrad_packed`` runs one implicit GEMM per (group pack, filter tap): each reads its
pixels' dY again for every tap, 9 times for a 3x3 filter. Here a program owns a pack of
GPT whole groups (BLOCK_N output x BLOCK_N input channels, block-diagonal) and
FILTER_ROWS (1 to 3) filter rows, and walks items of ROWS output rows x TILE_W output
columns of one image (split over SPLIT_K programs; BLOCK_M = ROWS x TILE_W pixels). Per
item it loads the dY block [pixels, BLOCK_N] once and, for each of its filter rows, the
input block [pixels, (filter column, channel)] of the row's taps; one dot a row adds
dY^T x X into that row's [BLOCK_N, columns x BLOCK_N] float32 accumulator: dY is read
once for all of a program's rows, not once a tap. With num_stages >= 2 Triton pipelines
these loads (cp.async): 1.2x over one stage on ResNeXt-50
(validation/results/grouped_wgrad_rows_h100/). Only the block-diagonal part is stored;
splits are added in a fixed order (``wgrad_gemm.reduce_splits``): no atomics.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, GradCall, next_pow2
from .common import cdiv, dot_precision, needs_int64, row_items, strides5, upcast_dot
from .grad_common import GradFamily, GradGrid, grad_acc
from .grad_packed import few_channel_groups_rejects, square_pack_gpt, square_pack_rejects
from .launcher import launch_kernel
from .wgrad_gemm import split_ok, split_slices

_RUNTIME_INTS = ["TR", "D", "H", "W", "OD", "OH", "OW", "std", "sth", "stw", "pdd", "pdh", "pdw",
                 "dld", "dlh", "dlw", "TILES_H", "TILES_W", "ITEMS", "ITEMS_PER_SPLIT",
                 "WS_STRIDE"]


@triton.jit
def _row_dot(acc, dyt, x_ptr, x_col, n_ok, n, od, oh, ow, p_ok, ktr, TR, KR, D, H, W,
             std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw, sxn, sxd, sxh, sxw, ks,
             ROWS_MASK: tl.constexpr, UPCAST: tl.constexpr, PREC: tl.constexpr,
             ACC: tl.constexpr):
    """acc + dY^T x the input block [pixels, (filter column, channel)] of filter row
    ``ktr`` (rows past the filter's end, ROWS_MASK, add zeros)."""
    kt = ktr // KR
    kr = ktr % KR
    idd = od * std - pdd + kt * dld
    ih = oh * sth - pdh + kr * dlh
    iw0 = ow * stw - pdw
    row_ok = p_ok & (idd >= 0) & (idd < D) & (ih >= 0) & (ih < H)
    if ROWS_MASK:
        row_ok = row_ok & (ktr < TR)
    iw = iw0[:, None] + (ks * dlw)[None, :]
    ok = row_ok[:, None] & (iw >= 0) & (iw < W) & n_ok[None, :]
    xv = tl.load(x_ptr + (n * sxn + idd * sxd + ih * sxh + iw0 * sxw)[:, None]
                 + x_col[None, :], mask=ok, other=0.0)
    if UPCAST:
        xv = xv.to(tl.float32)
    return tl.dot(dyt, xv, acc, input_precision=PREC, out_dtype=ACC)


@triton.jit
def _store_row(acc, ktr, TR, dw_ptr, ws_ptr, pid_s, k_glob, c_loc, ks, mask, KTOT, KS, WS_STRIDE,
               swk, swc, swt, swr, sws, KR, CG: tl.constexpr, SPLIT: tl.constexpr):
    """Filter row ``ktr``'s block-diagonal part of ``acc`` into dW or the split's slice."""
    kt = ktr // KR
    kr = ktr % KR
    mask = mask & (ktr < TR)
    if not SPLIT:
        w_off = ((k_glob * swk)[:, None] + (c_loc * swc + ks * sws)[None, :]
                 + kt * swt + kr * swr)
        tl.store(dw_ptr + w_off, acc.to(dw_ptr.dtype.element_ty), mask=mask)
    else:
        # Workspace [SPLIT_K slices, T*R*S, K, C/G] as in wgrad_gemm.
        tap = ktr * KS + ks
        ws_off = (k_glob * CG)[:, None] + (tap * (KTOT * CG) + c_loc)[None, :]
        tl.store(ws_ptr + pid_s.to(tl.int64) * WS_STRIDE + ws_off, acc, mask=mask)


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def wgrad_grouped_taps_kernel(
    dy_ptr, x_ptr, dw_ptr, ws_ptr,
    CTOT, KTOT, TR, D, H, W, OD, OH, OW, std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
    TILES_H, TILES_W, ITEMS, ITEMS_PER_SPLIT, WS_STRIDE,
    syn, syc, syd, syh, syw, sxn, sxc, sxd, sxh, sxw, swk, swc, swt, swr, sws,
    CG: tl.constexpr, KG: tl.constexpr, GPT: tl.constexpr, KR: tl.constexpr,
    KS: tl.constexpr, KS_P2: tl.constexpr, ROWS: tl.constexpr, TILE_W: tl.constexpr,
    BLOCK: tl.constexpr, FR: tl.constexpr, SPLIT: tl.constexpr, PREC: tl.constexpr,
    UPCAST: tl.constexpr, ACC: tl.constexpr, INT64: tl.constexpr,
):
    pack = tl.program_id(0)
    pid_s = tl.program_id(1)
    ktr0 = tl.program_id(2) * FR  # the first filter row: kt * KR + kr
    offs_m = tl.arange(0, BLOCK)
    # Columns: (filter column ks, input channel of the pack), ks slowest.
    offs_n = tl.arange(0, KS_P2 * BLOCK)
    ks = offs_n // BLOCK
    cn = offs_n % BLOCK
    k_glob = pack * (GPT * KG) + offs_m
    c_glob = pack * (GPT * CG) + cn
    m_ok = (offs_m < GPT * KG) & (k_glob < KTOT)
    n_ok = (cn < GPT * CG) & (c_glob < CTOT) & (ks < KS)
    if INT64:
        y_col = k_glob.to(tl.int64) * syc
        x_col = c_glob.to(tl.int64) * sxc + (ks * dlw).to(tl.int64) * sxw
    else:
        y_col = k_glob * syc
        x_col = c_glob * sxc + ks * dlw * sxw
    acc0 = tl.zeros((BLOCK, KS_P2 * BLOCK), dtype=ACC)
    # Up to three filter rows a program, each its own accumulator: dY is read once for
    # all of them (a constexpr branch leaves an unused one a 1 x 1 placeholder).
    if FR > 1:
        acc1 = tl.zeros((BLOCK, KS_P2 * BLOCK), dtype=ACC)
    else:
        acc1 = tl.zeros((1, 1), dtype=ACC)
    if FR > 2:
        acc2 = tl.zeros((BLOCK, KS_P2 * BLOCK), dtype=ACC)
    else:
        acc2 = tl.zeros((1, 1), dtype=ACC)
    # An item's pixels: ROWS rows x TILE_W columns, the column fastest.
    pix = tl.arange(0, ROWS * TILE_W)
    prow = pix // TILE_W
    pcol = pix % TILE_W
    first = pid_s * ITEMS_PER_SPLIT
    if INT64:
        first = first.to(tl.int64)
    end = tl.minimum(first + ITEMS_PER_SPLIT, ITEMS)
    for it in range(0, ITEMS_PER_SPLIT):
        # Items run band fastest: a program's next item reuses this one's halo rows.
        item = first + it
        band = item % TILES_H
        rest = item // TILES_H
        ow = (rest % TILES_W) * TILE_W + pcol
        rest = rest // TILES_W
        od = rest % OD
        n = rest // OD
        oh = band * ROWS + prow
        p_ok = (oh < OH) & (ow < OW) & (item < end)
        dy = tl.load(dy_ptr + (n * syn + od * syd + oh * syh + ow * syw)[:, None]
                     + y_col[None, :], mask=p_ok[:, None] & m_ok[None, :], other=0.0)
        dyt = tl.trans(dy)
        if UPCAST:
            dyt = dyt.to(tl.float32)
        acc0 = _row_dot(acc0, dyt, x_ptr, x_col, n_ok, n, od, oh, ow, p_ok, ktr0, TR, KR, D,
                        H, W, std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw, sxn, sxd, sxh, sxw,
                        ks, ROWS_MASK=FR > 1, UPCAST=UPCAST, PREC=PREC, ACC=ACC)
        if FR > 1:
            acc1 = _row_dot(acc1, dyt, x_ptr, x_col, n_ok, n, od, oh, ow, p_ok, ktr0 + 1, TR,
                            KR, D, H, W, std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw, sxn, sxd,
                            sxh, sxw, ks, ROWS_MASK=True, UPCAST=UPCAST, PREC=PREC, ACC=ACC)
        if FR > 2:
            acc2 = _row_dot(acc2, dyt, x_ptr, x_col, n_ok, n, od, oh, ow, p_ok, ktr0 + 2, TR,
                            KR, D, H, W, std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw, sxn, sxd,
                            sxh, sxw, ks, ROWS_MASK=True, UPCAST=UPCAST, PREC=PREC, ACC=ACC)
    # Only the block-diagonal part: output channel k of group k // KG, input channel c
    # of group c // CG, in the same group of the pack.
    same = (offs_m // KG)[:, None] == (cn // CG)[None, :]
    mask = m_ok[:, None] & n_ok[None, :] & same
    c_loc = cn % CG
    _store_row(acc0, ktr0, TR, dw_ptr, ws_ptr, pid_s, k_glob, c_loc, ks, mask, KTOT, KS,
               WS_STRIDE, swk, swc, swt, swr, sws, KR, CG=CG, SPLIT=SPLIT)
    if FR > 1:
        _store_row(acc1, ktr0 + 1, TR, dw_ptr, ws_ptr, pid_s, k_glob, c_loc, ks, mask, KTOT,
                   KS, WS_STRIDE, swk, swc, swt, swr, sws, KR, CG=CG, SPLIT=SPLIT)
    if FR > 2:
        _store_row(acc2, ktr0 + 2, TR, dw_ptr, ws_ptr, pid_s, k_glob, c_loc, ks, mask, KTOT,
                   KS, WS_STRIDE, swk, swc, swt, swr, sws, KR, CG=CG, SPLIT=SPLIT)


MAX_COLUMNS = 8  # filter columns (padded to a power of two) a program's N holds
# Accumulator values a thread may hold (its share of FILTER_ROWS tiles of BLOCK x
# columns * BLOCK).
MAX_ACC_PER_THREAD = 96

# (BLOCK_N channels of the pack, ROWS, TILE_W, num_warps, FILTER_ROWS): 16 channels hold
# ResNeXt's 4-, 8- and 16-channel groups whole (fewer wasted MMA columns), 32 every group
# up to 32 channels; items of 32 to 128 pixels. The shapes that together came within 0.2%
# of the best of 52 on each of ResNeXt-50's 28 grouped problems (device call 76,
# validation/results/grouped_wgrad_rows_h100/); num_stages=2 was faster than 1 on all of
# them (1.21x geomean).
TAPS_TILES = (
    (32, 8, 8, 4, 1), (16, 4, 16, 4, 3), (16, 4, 16, 4, 1), (16, 4, 8, 4, 3),
    (32, 4, 32, 8, 1), (32, 4, 16, 4, 3), (16, 2, 32, 4, 3), (16, 4, 16, 8, 3),
    (32, 4, 8, 8, 3), (32, 4, 32, 8, 3), (32, 8, 8, 4, 3), (16, 8, 8, 8, 1),
)
TAPS_SPLITS = (1, 8, 32, 64, 128)
TAPS_STAGES = (2, 3)


def filter_rows(geom, cfg: Config) -> int:
    """Filter rows a program reduces (FILTER_ROWS, at most the filter's rows)."""
    return min(cfg.get("FILTER_ROWS", 1), geom.t * geom.r)


def _taps_config(bn, rows, tw, warps, split, fr, stages) -> Config:
    extra = {"FILTER_ROWS": fr} if fr > 1 else {}
    return Config(BLOCK_M=rows * tw, TILE_W=tw, BLOCK_N=bn, SPLIT_K=split, **extra,
                  num_warps=warps, num_stages=stages)


class WgradGroupedTapsFamily(GradFamily):
    name = "wgrad_grouped_taps"
    summary = ("gradient of a few-channel grouped filter: whole groups packed in an MMA tile, "
               "a filter row's taps in one dot, up to three rows a program (dY read once for "
               "them), pipelined loads, fixed-order split")
    direction = "wgrad"
    configs = tuple(_taps_config(bn, rows, tw, wp, sk, fr, st)
                    for st in TAPS_STAGES for sk in TAPS_SPLITS
                    for bn, rows, tw, wp, fr in TAPS_TILES)

    def supports(self, geom) -> str | None:
        if reason := few_channel_groups_rejects(geom):
            return reason
        if next_pow2(geom.s) > MAX_COLUMNS:
            return f"{geom.s} filter columns: more than the {MAX_COLUMNS} one tile holds"
        return None

    @staticmethod
    def gpt(geom, cfg: Config) -> int:
        """Whole groups a BLOCK_N x BLOCK_N tile packs."""
        return square_pack_gpt(geom, cfg["BLOCK_N"])

    def grid(self, geom, cfg: Config) -> GradGrid:
        """Packs of GPT groups, each reducing all taps over items of output rows."""
        tw, bn = cfg["TILE_W"], cfg["BLOCK_N"]
        rows = cfg["BLOCK_M"] // tw
        gpt = self.gpt(geom, cfg)
        fr = filter_rows(geom, cfg)
        # A program's tile: FILTER_ROWS filter rows, each (filter column, channel) wide.
        return GradGrid(m=gpt * geom.kg, n=fr * gpt * geom.cg * geom.s, red=geom.gemm_m,
                        block_m=bn, block_n=fr * bn * next_pow2(geom.s), tiles_m=1, tiles_n=1,
                        mult=cdiv(geom.g, gpt) * cdiv(geom.t * geom.r, fr),
                        k_steps=row_items(geom, rows, tw), k_block=rows * tw)

    def hard_ok(self, geom, cfg, device) -> str | None:
        if reason := square_pack_rejects(geom, cfg["BLOCK_N"]):
            return reason
        cols = next_pow2(geom.s)
        rows = filter_rows(geom, cfg)
        per_thread = rows * cols * cfg["BLOCK_N"] ** 2 // (32 * cfg["num_warps"])
        if per_thread > MAX_ACC_PER_THREAD:
            return (f"{rows} accumulators of {cfg['BLOCK_N']} x {cols * cfg['BLOCK_N']} take "
                    f"{per_thread} registers a thread over {cfg['num_warps']} warps")
        return super().hard_ok(geom, cfg, device)

    def config_ok(self, geom, cfg, device) -> str | None:
        _, oh, ow = geom.out_spatial
        tw = cfg["TILE_W"]
        if cfg.get("FILTER_ROWS", 1) > geom.t * geom.r:
            return f"FILTER_ROWS={cfg['FILTER_ROWS']} exceeds the {geom.t * geom.r} filter rows"
        if tw > max(8, next_pow2(ow)):
            return f"TILE_W={tw} exceeds the {ow} output columns"
        if cfg["BLOCK_M"] // tw > max(1, next_pow2(oh)):
            return f"{cfg['BLOCK_M'] // tw} rows exceed the {oh} output rows"
        return (split_ok(geom, cfg, device, self.grid(geom, cfg))
                or self.hard_ok(geom, cfg, device))

    def launch(self, call: GradCall, cfg: Config) -> None:
        g = call.geom
        split, tw, bn = cfg["SPLIT_K"], cfg["TILE_W"], cfg["BLOCK_N"]
        rows = cfg["BLOCK_M"] // tw
        tiles = self.grid(g, cfg)
        gpt = self.gpt(g, cfg)
        od, oh, ow = g.out_spatial
        with split_slices(call, split, tiles.k_steps) as (per_split, ws, slices):
            fr = filter_rows(g, cfg)
            launch_kernel(wgrad_grouped_taps_kernel,
                          (cdiv(g.g, gpt), slices, cdiv(g.t * g.r, fr)),
                call.dy, call.x, call.out, ws,
                g.c, g.k, g.t * g.r, g.d, g.h, g.w, od, oh, ow, *g.stride, *g.pad, *g.dilation,
                cdiv(oh, rows), cdiv(ow, tw), tiles.k_steps, per_split,
                g.k * g.cg * g.t * g.r * g.s,
                *strides5(call.dy), *strides5(call.x), *strides5(call.out),
                CG=g.cg, KG=g.kg, GPT=gpt, KR=g.r, KS=g.s, KS_P2=next_pow2(g.s),
                ROWS=rows,
                TILE_W=tw, BLOCK=bn, FR=fr, SPLIT=split > 1,
                PREC=dot_precision(call), UPCAST=upcast_dot(call), ACC=grad_acc(call),
                INT64=needs_int64(call), num_warps=cfg["num_warps"],
                num_stages=cfg["num_stages"],
            )
