"""Gradient of a depthwise filter from runs of output rows, one accumulator a tap.

``wgrad_depthwise_taps`` keeps a [pixels, taps (padded to a power of two), channels]
accumulator and gathers every element's input through a 3D pointer tensor: a 3x3
filter pays 16 accumulator rows for 9 taps, and its tiles take 214-255 registers on
sm_90a (``validation/results/stem_depthwise_grads_h100/registers.md``). Here a
program owns BLOCK_N channels and walks items of ROWS output rows x TILE_W output
columns of one image (``item_tiles``; items split over SPLIT_K programs). An item's
ROWS rows of dY are loaded once, and so is each input row they need (one load a
filter column, the shifted loads hitting L1, as in ``depthwise_rows``); ``add_item``
adds dY x X into one [TILE_W, BLOCK_N] float32 accumulator per tap, a tuple unrolled
at compile time (96 registers for 4 rows of 16 x 32 on sm_90a, 128 for 8). Accumulators are
summed over the columns once, at the end; splits are added in a fixed order
(``wgrad_gemm.reduce_splits``): no atomics.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, GradCall
from .common import cdiv, needs_int64, row_items, row_loads, strides5, tap_columns
from .grad_common import DepthwiseWgradFamily, GradGrid, grad_acc
from .launcher import launch_kernel
from .wgrad_gemm import split_ok, split_slices

_RUNTIME_INTS = ["D", "H", "W", "OD", "OH", "OW", "std", "stw", "pdd", "pdh", "pdw", "dld",
                 "dlw", "TILES_H", "TILES_W", "ITEMS", "ITEMS_PER_SPLIT", "WS_STRIDE"]


@triton.jit
def item_tiles(dy_ptr, x_ptr, item, item_end, cols, y_col, x_col, k_mask,
               D, H, W, OD, OH, OW, std, stw, pdd, pdh, pdw, dld, dlw, TILES_H, TILES_W,
               syn, syd, syh, syw, sxn, sxd, sxh, sxw,
               KT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr, SH: tl.constexpr,
               DH: tl.constexpr, ROWS: tl.constexpr, TILE_W: tl.constexpr):
    """The ROWS dY rows of an item (ROWS output rows x TILE_W columns of one image, band
    fastest) and the input rows they need, one shifted load a filter column: tuples of
    raw tiles, X indexed (kt * input rows + i) * KS + ks. Zero past ``item_end``."""
    live = item < item_end
    band = item % TILES_H
    rest = item // TILES_H
    ow = (rest % TILES_W) * TILE_W + cols
    rest = rest // TILES_W
    od = rest % OD
    n = rest // OD
    oh0 = band * ROWS
    q_ok = (ow < OW) & live
    dys = ()
    for o in tl.static_range(ROWS):
        y_off = n * syn + od * syd + (oh0 + o) * syh
        m = (q_ok & (oh0 + o < OH))[:, None] & k_mask[None, :]
        dys = dys + (tl.load(dy_ptr + y_off + (ow * syw)[:, None] + y_col[None, :], mask=m,
                             other=0.0),)
    col_ok, col_off = tap_columns(ow * stw - pdw, dlw, W, sxw, x_col, k_mask, KS)
    ih0 = oh0 * SH - pdh
    xs = ()
    for kt in tl.static_range(KT):
        idd = od * std - pdd + kt * dld
        slice_ok = (idd >= 0) & (idd < D) & live
        x_slice = n * sxn + idd * sxd
        for i in tl.static_range((ROWS - 1) * SH + (KR - 1) * DH + 1):
            ih = ih0 + i
            row_ok = (ih >= 0) & (ih < H) & slice_ok
            for ks in tl.static_range(KS):
                xs = xs + (tl.load(x_ptr + (x_slice + ih * sxh) + col_off[ks],
                                   mask=col_ok[ks] & row_ok, other=0.0),)
    return dys, xs


@triton.jit
def add_item(accs, dys, xs, KT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr,
             SH: tl.constexpr, DH: tl.constexpr, ROWS: tl.constexpr, ACC: tl.constexpr):
    """accs[t] += dY row o x input row i for every tap t = (kt * KR + kr) * KS + ks with
    i = o * SH + kr * DH (constexprs cannot be re-bound in an unrolled loop, hence kr
    spelled out as (t // KS) % KR)."""
    rows_in: tl.constexpr = (ROWS - 1) * SH + (KR - 1) * DH + 1
    dv = ()
    for o in tl.static_range(ROWS):
        dv = dv + (dys[o].to(ACC),)
    for kt in tl.static_range(KT):
        for i in tl.static_range(rows_in):
            for ks in tl.static_range(KS):
                xv = xs[(kt * rows_in + i) * KS + ks].to(ACC)
                new = ()
                for t in tl.static_range(KT * KR * KS):
                    a = accs[t]
                    if t // (KR * KS) == kt and t % KS == ks and i >= (t // KS) % KR * DH:
                        if ((i - (t // KS) % KR * DH) % SH == 0
                                and (i - (t // KS) % KR * DH) // SH < ROWS):
                            a = a + dv[(i - (t // KS) % KR * DH) // SH] * xv
                    new = new + (a,)
                accs = new
    return accs


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def wgrad_depthwise_rows_kernel(
    dy_ptr, x_ptr, dw_ptr, ws_ptr,
    KTOT, D, H, W, OD, OH, OW, std, stw, pdd, pdh, pdw, dld, dlw,
    TILES_H, TILES_W, ITEMS, ITEMS_PER_SPLIT, WS_STRIDE,
    syn, syc, syd, syh, syw, sxn, sxc, sxd, sxh, sxw, swk, swt, swr, sws,
    MULT: tl.constexpr, KT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr,
    SH: tl.constexpr, DH: tl.constexpr, ROWS: tl.constexpr, TILE_W: tl.constexpr,
    BLOCK_N: tl.constexpr, SPLIT: tl.constexpr, ACC: tl.constexpr, INT64: tl.constexpr,
):
    offs_k = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    pid_s = tl.program_id(1)
    k_mask = offs_k < KTOT
    # One input channel a group; with one output channel each (MULT == 1) the channel
    # offsets stay provably contiguous, so the loads vectorize.
    c_in = offs_k if MULT == 1 else offs_k // MULT
    if INT64:
        y_col = offs_k.to(tl.int64) * syc
        x_col = c_in.to(tl.int64) * sxc
    else:
        y_col = offs_k * syc
        x_col = c_in * sxc
    accs = ()
    for _t in tl.static_range(KT * KR * KS):
        accs = accs + (tl.zeros((TILE_W, BLOCK_N), dtype=ACC),)
    cols = tl.arange(0, TILE_W)
    first = pid_s * ITEMS_PER_SPLIT
    if INT64:
        first = first.to(tl.int64)
    end = tl.minimum(first + ITEMS_PER_SPLIT, ITEMS)
    for it in range(0, ITEMS_PER_SPLIT):
        # (Issuing the next item's loads before this one's FMAs measured slower on the
        # H100: 152 registers against 96; validation/results/depthwise_wgrad_rows_h100/.)
        dys, xs = item_tiles(dy_ptr, x_ptr, first + it, end, cols, y_col, x_col, k_mask,
                             D, H, W, OD, OH, OW, std, stw, pdd, pdh, pdw, dld, dlw,
                             TILES_H, TILES_W, syn, syd, syh, syw, sxn, sxd, sxh, sxw,
                             KT, KR, KS, SH, DH, ROWS, TILE_W)
        accs = add_item(accs, dys, xs, KT, KR, KS, SH, DH, ROWS, ACC)
    for t in tl.static_range(KT * KR * KS):
        total = tl.sum(accs[t], axis=0)
        if not SPLIT:
            w_off = (offs_k * swk + (t // (KR * KS)) * swt + ((t // KS) % KR) * swr
                     + (t % KS) * sws)
            tl.store(dw_ptr + w_off, total.to(dw_ptr.dtype.element_ty), mask=k_mask)
        else:
            # Workspace [SPLIT_K slices, T*R*S, K, C/G = 1] as in wgrad_gemm.
            tl.store(ws_ptr + pid_s.to(tl.int64) * WS_STRIDE + t * KTOT + offs_k, total,
                     mask=k_mask)


MAX_TAPS = 27  # accumulators unrolled at compile time (3x3x3; 5x5 = 25)
MAX_ROW_LOADS = 48  # (input rows an item walks) x filter columns x depth taps, unrolled
# Accumulator values a thread may hold (taps x its share of a TILE_W x BLOCK_N tile).
MAX_ACC_PER_THREAD = 112


def _tiles() -> tuple[tuple[int, int, int, int], ...]:
    """(ROWS, TILE_W, BLOCK_N, num_warps): 1 to 8 output rows over 4 values of a tile a
    thread (one 8-byte load of fp16 channels), 1 or 2 rows over 8 (one 16-byte load).
    Compiled for sm_90a (3x3, fp16, channels_last, stride 1), the 4-value tiles take
    72-106 registers up to 4 rows and 128 at 8, the 8-value ones 128-144
    (validation/results/depthwise_wgrad_rows_h100/registers.md). The
    8-row tiles were added after a probe of MobileNetV2's batch-32 layers (call 54,
    validation/results/depthwise_wgrad_rows_h100/calls_eval.md):
    the two best swept tiles made 8 rows high ran 1.06-1.15x faster on 7 of 10 (5 of the
    6 stride-1 ones; at stride 2 they unroll more row loads than MAX_ROW_LOADS)."""
    out = []
    for tw, bn, warps in ((8, 32, 2), (8, 64, 4), (16, 32, 4), (16, 64, 8), (32, 32, 8),
                          (8, 128, 8)):
        out += [(rows, tw, bn, warps) for rows in (1, 2, 4, 8)]
    for tw, bn, warps in ((16, 32, 2), (16, 64, 4), (32, 32, 4)):
        out += [(rows, tw, bn, warps) for rows in (1, 2)]
    return tuple(out)


ROWS_TILES = _tiles()
ROWS_SPLITS = (1, 8, 32, 128, 512)


class WgradDepthwiseRowsFamily(DepthwiseWgradFamily):
    name = "wgrad_depthwise_rows"
    overlap_first = True  # launched before dX's kernels when the two overlap
    summary = ("gradient of a depthwise filter over runs of output rows: dY and each input "
               "row loaded once an item, one FMA accumulator a tap, fixed-order split")
    max_taps = MAX_TAPS
    configs = tuple(Config(BLOCK_M=rows * tw, TILE_W=tw, BLOCK_N=bn, SPLIT_K=sk,
                           num_warps=wp, num_stages=1)
                    for sk in ROWS_SPLITS for rows, tw, bn, wp in ROWS_TILES)

    def grid(self, geom, cfg: Config) -> GradGrid:
        """Blocks of output channels, each reducing all taps over items of output rows."""
        tw, bn = cfg["TILE_W"], cfg["BLOCK_N"]
        rows = cfg["BLOCK_M"] // tw
        taps = geom.t * geom.r * geom.s
        return GradGrid(m=taps, n=geom.k, red=geom.gemm_m, block_m=taps, block_n=bn,
                        tiles_m=1, tiles_n=cdiv(geom.k, bn), mult=1,
                        k_steps=row_items(geom, rows, tw), k_block=rows * tw, fma=True)

    def hard_ok(self, geom, cfg, device) -> str | None:
        rows = cfg["BLOCK_M"] // cfg["TILE_W"]
        loads = geom.t * row_loads(geom, rows)
        if loads > MAX_ROW_LOADS:
            return (f"{rows} output rows walk {loads} input-row loads, more than the "
                    f"{MAX_ROW_LOADS} unrolled")
        taps = geom.t * geom.r * geom.s
        per_thread = taps * cfg["BLOCK_M"] * cfg["BLOCK_N"] // (rows * 32 * cfg["num_warps"])
        if per_thread > MAX_ACC_PER_THREAD:
            return (f"{taps} accumulators of {cfg['TILE_W']} x {cfg['BLOCK_N']} take "
                    f"{per_thread} registers a thread over {cfg['num_warps']} warps")
        return super().hard_ok(geom, cfg, device)

    def config_ok(self, geom, cfg, device) -> str | None:
        _, oh, ow = geom.out_spatial
        tw = cfg["TILE_W"]
        if tw > max(8, 2 * ow):
            return f"TILE_W={tw} exceeds the {ow} output columns"
        if cfg["BLOCK_M"] // tw > max(1, oh):
            return f"{cfg['BLOCK_M'] // tw} rows exceed the {oh} output rows"
        if cfg["BLOCK_N"] > max(32, 2 * geom.k):
            return f"BLOCK_N={cfg['BLOCK_N']} exceeds the {geom.k} channels"
        return (split_ok(geom, cfg, device, self.grid(geom, cfg))
                or self.hard_ok(geom, cfg, device))

    def launch(self, call: GradCall, cfg: Config) -> None:
        g = call.geom
        split, tw = cfg["SPLIT_K"], cfg["TILE_W"]
        rows = cfg["BLOCK_M"] // tw
        tiles = self.grid(g, cfg)
        od, oh, ow = g.out_spatial
        sy, sx, sw = strides5(call.dy), strides5(call.x), strides5(call.out)
        with split_slices(call, split, tiles.k_steps) as (per_split, ws, slices):
            launch_kernel(wgrad_depthwise_rows_kernel, (tiles.tiles_n, slices),
                call.dy, call.x, call.out, ws,
                g.k, g.d, g.h, g.w, od, oh, ow, g.stride[0], g.stride[2], g.pad[0],
                g.pad[1], g.pad[2], g.dilation[0], g.dilation[2],
                cdiv(oh, rows), cdiv(ow, tw), tiles.k_steps, per_split,
                g.k * g.t * g.r * g.s,
                *sy, *sx, sw[0], sw[2], sw[3], sw[4],
                MULT=g.kg, KT=g.t, KR=g.r, KS=g.s, SH=g.stride[1], DH=g.dilation[1],
                ROWS=rows, TILE_W=tw, BLOCK_N=cfg["BLOCK_N"], SPLIT=split > 1,
                ACC=grad_acc(call), INT64=needs_int64(call),
                num_warps=cfg["num_warps"], num_stages=1,
            )
