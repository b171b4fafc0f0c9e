"""Gradient of a 2D depthwise filter over spans of dY's flattened (column, channel) row.

``wgrad_depthwise_rows`` walks items of ROWS output rows x TILE_W columns x BLOCK_N
channels, and recomputes every load's column offsets and masks an item; its tiles run
at about 1.3 TB/s on MobileNetV2's layers, against 1.9-2.5 for ``dgrad_depthwise_span``
(validation/results/fused_depthwise_h100/). Here a program owns one span of BLOCK
elements of dY's row flattened over (column, channel), as ``depthwise_span`` does, and
walks items of ROWS output rows of one image (``ITEMS_PER_SPLIT`` of them, SPLIT_K
programs a span). The span is fixed, so its loads' offsets and masks are computed once;
an item moves only a scalar row offset. Loads are contiguous runs of channels with no
block of channels padded (144 channels: no idle lanes). Each tap accumulates
dY x X elementwise into a [BLOCK] float32 tuple entry.

At the end, a span's elements fold into channels: element j holds channel
(span * BLOCK + j) % K, so channel c sits at j = (c - c0) mod K + f * K for the folds f
(``fold_index``); one gather a tap reads them, and a sum over the folds (a fixed tree)
gives the span's partial dW. Partials go to a float32 workspace [spans x splits, taps,
K] that ``wgrad_gemm.reduce_splits`` adds in a fixed order: no atomics.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, GradCall, next_pow2
from .common import cdiv, needs_int64, row_loads, rows_limit, strides5
from .depthwise_span import column_loads, input_row
from .grad_common import DepthwiseWgradFamily, GradGrid, grad_acc
from .launcher import launch_kernel
from .splitk import split_rejects
from .wgrad_gemm import MAX_WORKSPACE_BYTES, reduce_splits, split_steps, split_workspace

_RUNTIME_INTS = ["H", "W", "OH", "OW", "TILES_H", "ITEMS", "ITEMS_PER_SPLIT", "stw",
                 "pdh", "pdw", "dlw", "WS_STRIDE"]


@triton.jit
def fold_index(c0, KTOT: tl.constexpr, BLOCK: tl.constexpr, KB: tl.constexpr,
               FOLDS: tl.constexpr):
    """Where each channel sits in a span whose first element is channel ``c0``: flat
    [FOLDS * KB] indices (fold f, channel c) = (c - c0) mod K + f * K into the span, and
    which of them exist (inside the span, c < K)."""
    c = tl.arange(0, KB)
    f = tl.arange(0, FOLDS)
    idx = f[:, None] * KTOT + ((c + (KTOT - c0)) % KTOT)[None, :]
    ok = (idx < BLOCK) & (c < KTOT)[None, :]
    idx = tl.where(ok, idx, 0)
    return tl.reshape(idx, (FOLDS * KB,)), tl.reshape(ok, (FOLDS * KB,))


@triton.jit
def item_window(dy_ptr, x_ptr, item, end, y_off, col_off, col_ok, ok, H, OH, TILES_H, pdh,
                syn, syh, sxn, sxh, KR: tl.constexpr, KS: tl.constexpr, SH: tl.constexpr,
                DH: tl.constexpr, ROWS: tl.constexpr, INT64: tl.constexpr):
    """An item's ROWS dY rows of the span and the input rows they meet (KS column-shifted
    loads each), raw; nothing read (zeros) for an item at or past ``end``."""
    live = item < end
    band = item % TILES_H
    n = item // TILES_H
    if INT64:
        n = n.to(tl.int64)
    oh0 = band * ROWS
    oh_end = tl.where(live, OH, 0)
    h_end = tl.where(live, H, 0)
    dys = ()
    for o in tl.static_range(ROWS):
        dys = dys + (tl.load(dy_ptr + (n * syn + (oh0 + o) * syh) + y_off,
                             mask=ok & (oh0 + o < oh_end), other=0.0),)
    xs = ()
    ih0 = oh0 * SH - pdh
    for i in tl.static_range((ROWS - 1) * SH + (KR - 1) * DH + 1):
        xs = xs + input_row(x_ptr, n * sxn, ih0 + i, sxh, h_end, col_off, col_ok, KS)
    return dys, xs


@triton.jit
def add_window(accs, dys, xs, KR: tl.constexpr, KS: tl.constexpr, SH: tl.constexpr,
               DH: tl.constexpr, ROWS: tl.constexpr, ACC: tl.constexpr):
    """accs[t] += dY row o x input row i (column-shifted by ks) for every tap
    t = kr * KS + ks, where i = o * SH + kr * DH."""
    new = ()
    for t in tl.static_range(KR * KS):
        a = accs[t]
        for o in tl.static_range(ROWS):
            a += dys[o].to(ACC) * xs[(o * SH + (t // KS) * DH) * KS + t % KS].to(ACC)
        new = new + (a,)
    return new


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def wgrad_depthwise_span_kernel(
    dy_ptr, x_ptr, dw_ptr, ws_ptr,
    H, W, OH, OW, TILES_H, ITEMS, ITEMS_PER_SPLIT, stw, pdh, pdw, dlw, WS_STRIDE,
    syn, syc, syh, syw, sxn, sxc, sxh, sxw, swk, swr, sws,
    KTOT: tl.constexpr, MULT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr,
    SH: tl.constexpr, DH: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr,
    KB: tl.constexpr, FOLDS: tl.constexpr, TO_WS: tl.constexpr, STAGES: tl.constexpr,
    ACC: tl.constexpr, INT64: tl.constexpr,
):
    span = tl.program_id(0)
    pid_s = tl.program_id(1)
    j = span * BLOCK + tl.arange(0, BLOCK)
    col = j // KTOT
    k = j % KTOT
    ok = col < OW
    c_in = k if MULT == 1 else k // MULT
    if INT64:
        k = k.to(tl.int64)
        c_in = c_in.to(tl.int64)
        col = col.to(tl.int64)
    # The span never moves: its dY offsets, and each filter column's input offsets and
    # masks, are computed once; an item adds a scalar.
    y_off = col * syw + k * syc
    col_off, col_ok = column_loads(col, c_in, ok, W, stw, pdw, dlw, sxw, sxc, KS)
    accs = ()
    for _t in tl.static_range(KR * KS):
        accs = accs + (tl.zeros((BLOCK,), dtype=ACC),)
    first = pid_s * ITEMS_PER_SPLIT
    end = tl.minimum(first + ITEMS_PER_SPLIT, ITEMS)
    if STAGES == 1:
        for it in range(0, ITEMS_PER_SPLIT):
            dys, xs = item_window(dy_ptr, x_ptr, first + it, end, y_off, col_off, col_ok, ok,
                                  H, OH, TILES_H, pdh, syn, syh, sxn, sxh, KR, KS, SH, DH,
                                  ROWS, INT64)
            accs = add_window(accs, dys, xs, KR, KS, SH, DH, ROWS, ACC)
    else:
        # The next item's window is loaded before this one's FMAs (registers permitting:
        # ``held_registers`` counts two windows).
        dys, xs = item_window(dy_ptr, x_ptr, first, end, y_off, col_off, col_ok, ok, H, OH,
                              TILES_H, pdh, syn, syh, sxn, sxh, KR, KS, SH, DH, ROWS, INT64)
        for it in range(0, ITEMS_PER_SPLIT):
            dys_next, xs_next = item_window(dy_ptr, x_ptr, first + it + 1, end, y_off,
                                            col_off, col_ok, ok, H, OH, TILES_H, pdh, syn,
                                            syh, sxn, sxh, KR, KS, SH, DH, ROWS, INT64)
            accs = add_window(accs, dys, xs, KR, KS, SH, DH, ROWS, ACC)
            dys, xs = dys_next, xs_next
    idx, idx_ok = fold_index((span * BLOCK) % KTOT, KTOT, BLOCK, KB, FOLDS)
    c = tl.arange(0, KB)
    for t in tl.static_range(KR * KS):
        got = tl.where(idx_ok, tl.gather(accs[t], idx, 0), 0.0)
        part = tl.sum(tl.reshape(got, (FOLDS, KB)), axis=0)
        if TO_WS:
            slice_id = pid_s.to(tl.int64) * tl.num_programs(0) + span
            tl.store(ws_ptr + slice_id * WS_STRIDE + t * KTOT + c, part, mask=c < KTOT)
        else:
            tl.store(dw_ptr + c * swk + (t // KS) * swr + (t % KS) * sws,
                     part.to(dw_ptr.dtype.element_ty), mask=c < KTOT)


# Accumulators unrolled: 4x4 takes 64 registers a thread at 4 elements; 5x5 never fit.
MAX_TAPS = 16
MAX_ROW_LOADS = 40  # input rows an item walks x filter columns, unrolled
# 32-bit registers a thread may spend on its accumulators and its items' raw windows.
MAX_HELD_REGISTERS = 128


def _tiles() -> tuple[tuple[int, int, int], ...]:
    """(ROWS, BLOCK, num_warps): 1 to 8 output rows an item, spans of 256 to 2048
    elements, 4 or 8 elements a thread (one 8- or 16-byte fp16 load), 2 to 8 warps.
    One warp is left out: on the H100, one-warp configs summed wrong for 143 channels
    (every split, relative error 0.29; call 147's sweep) where the interpreter is right,
    and were slower than the best multi-warp config on every problem they ran right
    (0.44-0.87x its time). The cause is not known: the fold alone (``fold_index``, the
    gather and the sum over folds) is right at one warp on 143 channels and 256-element
    spans on the H100 (call 151, validation/gpu/probe_span_gather.py). With two warps or
    more, every config was right on all 50 swept problems."""
    out = []
    for rows in (1, 2, 4, 8):
        for per_thread in (4, 8):
            for warps in (2, 4, 8):
                block = per_thread * 32 * warps
                if 256 <= block <= 2048:
                    out.append((rows, block, warps))
    return tuple(out)


SPAN_TILES = _tiles()
SPAN_SPLITS = (1, 4, 8, 16, 32, 64, 128, 256)


def span_layout(geom, rows: int, block: int) -> tuple[int, int, int]:
    """(spans of dY's row, row bands an image, items = images x bands)."""
    _, oh, ow = geom.out_spatial
    bands = cdiv(oh, rows)
    return cdiv(ow * geom.k, block), bands, geom.n * bands


def folds(geom, block: int) -> tuple[int, int]:
    """(folds, channel width): a span folds into K channels over cdiv(BLOCK, K) folds,
    both rounded up to powers of two for the gather."""
    return next_pow2(cdiv(block, geom.k)), next_pow2(geom.k)


def held_registers(geom, cfg: Config) -> int:
    """32-bit registers a thread holds: a [BLOCK] accumulator a tap, and num_stages
    items' dY rows and input-row loads, raw."""
    rows, per_thread = cfg["BLOCK_M"], cfg["BLOCK_N"] // (32 * cfg["num_warps"])
    acc_bytes = 8 if geom.dtype == "float64" else 4
    window = (rows + row_loads(geom, rows)) * per_thread * geom.elem_bytes
    return (geom.r * geom.s * per_thread * acc_bytes + cfg["num_stages"] * window) // 4


class WgradDepthwiseSpanFamily(DepthwiseWgradFamily):
    """Configs: BLOCK_M output rows an item x BLOCK_N elements of dY's (column, channel)
    row a program, SPLIT_K programs a span; num_stages=2 loads the next item's window
    before this one's FMAs (by hand: Triton compiles every config with one stage)."""

    name = "wgrad_depthwise_span"
    overlap_first = True  # launched before dX's kernels when the two overlap
    summary = ("gradient of a 2D depthwise filter over fixed spans of dY's (column, "
               "channel) row walking output rows, folded into channels once, "
               "fixed-order split")
    max_taps = MAX_TAPS
    configs = tuple(Config(BLOCK_M=rows, BLOCK_N=block, SPLIT_K=sk, num_warps=wp,
                           num_stages=st)
                    for sk in SPAN_SPLITS for rows, block, wp in SPAN_TILES for st in (1, 2))

    def supports(self, geom) -> str | None:
        if geom.dims != 2:
            return "2D only (3D depthwise wgrad runs on wgrad_depthwise_rows)"
        if geom.layout != "channels_last":
            return "spans of the (column, channel) row are contiguous in channels_last only"
        return super().supports(geom)

    def grid(self, geom, cfg: Config) -> GradGrid:
        """Spans of dY's row, each reducing all taps over items of output rows."""
        rows, block = cfg["BLOCK_M"], cfg["BLOCK_N"]
        spans, _, items = span_layout(geom, rows, block)
        taps = geom.r * geom.s
        return GradGrid(m=taps, n=geom.k, red=geom.gemm_m, block_m=taps, block_n=block,
                        tiles_m=1, tiles_n=spans, mult=1, k_steps=items,
                        k_block=rows * block, fma=True)

    def hard_ok(self, geom, cfg, device) -> str | None:
        rows, warps = cfg["BLOCK_M"], cfg["num_warps"]
        why = rows_limit(geom, rows, MAX_ROW_LOADS)
        if why:
            return why
        held = held_registers(geom, cfg)
        # A GPU's register file (the interpreter runs any tile: float64 gradchecks).
        if held > MAX_HELD_REGISTERS and device.key != "interpreter":
            return (f"{geom.r * geom.s} accumulators and {cfg['num_stages']} windows of "
                    f"{rows} rows take {held} registers a thread over {warps} warps")
        return super().hard_ok(geom, cfg, device)

    def config_ok(self, geom, cfg, device) -> str | None:
        _, oh, ow = geom.out_spatial
        rows, block, split = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["SPLIT_K"]
        if block > max(256, next_pow2(ow * geom.k)):
            return f"a {block}-element span exceeds dY's row of {ow * geom.k}"
        if block < min(geom.k, 2048):
            return f"a {block}-element span holds fewer than the {geom.k} channels"
        if rows > max(1, next_pow2(oh)):
            return f"{rows} rows exceed the {oh} output rows"
        tiles = self.grid(geom, cfg)
        if split > 1:
            why = split_rejects(tiles.programs, tiles.k_steps, split, device, min_run=4)
            if why:
                return why
        # Every span writes a partial dW (one slice a span and split) unless there is one.
        slices = split * tiles.tiles_n
        ws = slices * geom.k * geom.r * geom.s * 4
        if slices > 1 and ws > MAX_WORKSPACE_BYTES:
            return (f"{tiles.tiles_n} spans x SPLIT_K={split} need {ws >> 20} MiB of "
                    "workspace")
        return self.hard_ok(geom, cfg, device)

    def launch(self, call: GradCall, cfg: Config) -> None:
        g = call.geom
        rows, block = cfg["BLOCK_M"], cfg["BLOCK_N"]
        spans, bands, items = span_layout(g, rows, block)
        per_split, splits = split_steps(items, cfg["SPLIT_K"])
        splits = max(splits, 1)
        slices = spans * splits
        ws = split_workspace(call, slices) if slices > 1 else call.out
        n_folds, kb = folds(g, block)
        _, oh, ow = g.out_spatial
        sy, sx, sw = strides5(call.dy), strides5(call.x), strides5(call.out)
        launch_kernel(wgrad_depthwise_span_kernel, (spans, splits),
            call.dy, call.x, call.out, ws,
            g.h, g.w, oh, ow, bands, items, per_split, g.stride[2], g.pad[1], g.pad[2],
            g.dilation[2], g.k * g.r * g.s,
            sy[0], sy[1], sy[3], sy[4], sx[0], sx[1], sx[3], sx[4], sw[0], sw[3], sw[4],
            KTOT=g.k, MULT=g.kg, KR=g.r, KS=g.s, SH=g.stride[1], DH=g.dilation[1],
            ROWS=rows, BLOCK=block, KB=kb, FOLDS=n_folds, TO_WS=slices > 1,
            STAGES=cfg["num_stages"], ACC=grad_acc(call), INT64=needs_int64(call),
            num_warps=cfg["num_warps"], num_stages=1,
        )
        if slices > 1:
            reduce_splits(call, ws, slices)
