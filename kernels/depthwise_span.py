"""2D depthwise convolution over spans of the flattened (column, channel) output row.

``depthwise_rows`` tiles a row as TILE_W pixels x BLOCK_N channels, and BLOCK_N is a
power of two: with 144 channels (MobileNetV2) a 64-channel tile idles a third of its
last block and a 16-channel one issues 32-byte loads, and on the H100 that layer ran
at 0.78x cuDNN while 192 channels ran at 1.02x. Here a program covers ROWS output
rows x BLOCK elements of the row flattened over (column, channel), whatever the
channel count: in channels_last one output row is one contiguous run of OW * K
values, so a span wastes only its last block's tail and its loads are contiguous
runs of K channels (16-byte vectors where K is a multiple of 16). Rows are walked
as in ``depthwise_rows``: each input row is loaded once per filter column and added
into every output row that uses it. The price is a per-element weight gather
(the taps of channel ``j % K``), once per program, from a table that stays in L1.

K and the channel multiplier are compile-time so that ``j // K`` and ``j % K`` are a
multiply and a shift, not a division.

Two schedules (``loads_first``, chosen at launch from the window's size): where the
window's raw values fit in 64 registers a thread, every load is issued before the
first store (call 105, MobileNetV2 at batch 32: the stride-1 layers' best configs
10-16% faster, the stride-2 ones 0-4%); otherwise rows are
loaded in order and each output row is stored once its last row is in, so that only
about KR rows are live.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, ConvCall, KernelFamily, next_pow2
from .common import (
    activate,
    cdiv,
    needs_int64,
    oriented_filter,
    row_loads,
    rows_limit,
    strides5,
)
from .launcher import launch_kernel

_RUNTIME_INTS = ["H", "W", "OH", "OW", "SPANS", "TILES_H", "stw", "pdh", "pdw", "dlw"]


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def depthwise_span_kernel(
    x_ptr, w_ptr, out_ptr, syn, syc, syh, syw,
    bias_ptr, res_ptr, srn, src, srh, srw,
    H, W, OH, OW, SPANS, TILES_H, stw, pdh, pdw, dlw,
    sxn, sxc, sxh, sxw, swk, swr, sws,
    KTOT: tl.constexpr, MULT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr,
    SH: tl.constexpr, DH: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr,
    ACT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr, INT64: tl.constexpr,
    LOADS_FIRST: tl.constexpr,
):
    band, n, ow, k, ok = span_program(SPANS, TILES_H, OW, KTOT, BLOCK)
    oh0 = band * ROWS
    if MULT == 1:
        c_in = k
    else:
        c_in = k // MULT
    if INT64:
        n = n.to(tl.int64)
        k = k.to(tl.int64)
        c_in = c_in.to(tl.int64)
    x_img = n * sxn
    taps = filter_taps(w_ptr, k, ok, swk, swr, sws, KR, KS)
    col_off, col_ok = column_loads(ow, c_in, ok, W, stw, pdw, dlw, sxw, sxc, KS)
    ih0 = oh0 * SH - pdh
    if HAS_BIAS:
        bias = tl.load(bias_ptr + k, mask=ok, other=0.0).to(tl.float32)
    else:
        bias = 0.0
    # Input row i feeds output row o through filter row kr when i = o * SH + kr * DH.
    # LOADS_FIRST: every load before the first store. The compiler cannot move a load
    # past a store to another pointer, so a row loaded after an output row's store waits
    # a memory round trip of its own (one an output row, in the interleaved SASS).
    # Otherwise each output row is stored as soon as its last input row is in, so only
    # about KR * DH rows are live at once (tall windows, wide rows).
    rows = ()
    for i in tl.static_range((ROWS - 1) * SH + (KR - 1) * DH + 1):
        rows = rows + input_row(x_ptr, x_img, ih0 + i, sxh, H, col_off, col_ok, KS)
        if not LOADS_FIRST and i >= (KR - 1) * DH and (i - (KR - 1) * DH) % SH == 0:
            oh = oh0 + (i - (KR - 1) * DH) // SH
            r = _residual(res_ptr, n, oh, ow, k, ok, OH, srn, srh, srw, src, HAS_RES)
            _store_row(rows, taps, i - (KR - 1) * DH, bias, r, oh, n, ow, k, ok, OH,
                       out_ptr, syn, syc, syh, syw, KR, KS, DH, ACT, HAS_BIAS, HAS_RES)
    if LOADS_FIRST:
        res = ()
        for o in tl.static_range(ROWS):
            res = res + (_residual(res_ptr, n, oh0 + o, ow, k, ok, OH, srn, srh, srw, src,
                                   HAS_RES),)
        for o in tl.static_range(ROWS):
            _store_row(rows, taps, o * SH, bias, res[o], oh0 + o, n, ow, k, ok, OH,
                       out_ptr, syn, syc, syh, syw, KR, KS, DH, ACT, HAS_BIAS, HAS_RES)


@triton.jit
def span_program(SPANS, TILES_H, WIDTH, CHANNELS: tl.constexpr, BLOCK: tl.constexpr):
    """This program's (row band, image, column and channel of each element, in the row)
    for a grid of images x TILES_H row bands x SPANS spans of BLOCK elements of a row
    flattened over (column, channel). Axis 0 walks the spans of a row fastest, so programs
    in flight share input rows in L2; CHANNELS is compile-time so that the split is a
    multiply and a shift."""
    pid = tl.program_id(0)
    span = pid % SPANS
    rest = pid // SPANS
    j = span * BLOCK + tl.arange(0, BLOCK)
    col = j // CHANNELS
    return rest % TILES_H, rest // TILES_H, col, j % CHANNELS, col < WIDTH


@triton.jit
def filter_taps(w_ptr, k, ok, swk, swr, sws, KR: tl.constexpr, KS: tl.constexpr):
    """The filter taps of each element's channel ``k``, fp32, loaded once per program (a
    gather from a table that stays in L1): a tuple indexed kr * KS + ks."""
    taps = ()
    for kr in tl.static_range(KR):
        for ks in tl.static_range(KS):
            wv = tl.load(w_ptr + k * swk + kr * swr + ks * sws, mask=ok, other=0.0)
            taps = taps + (wv.to(tl.float32),)
    return taps


@triton.jit
def _residual(res_ptr, n, oh, ow, k, ok, OH, srn, srh, srw, src, HAS_RES: tl.constexpr):
    """Output row ``oh``'s residual (raw values), or 0 without one."""
    if HAS_RES:
        return tl.load(res_ptr + (n * srn + oh * srh + ow * srw + k * src),
                       mask=ok & (oh < OH), other=0.0)
    else:
        return 0.0


@triton.jit
def column_loads(ow, c_in, ok, W, stw, pdw, dlw, sxw, sxc, KS: tl.constexpr):
    """Each filter column's input offsets (column and channel) and masks for the span's
    output columns ``ow``: what ``input_row`` adds a row offset to."""
    col_off = ()
    col_ok = ()
    for ks in tl.static_range(KS):
        iw = ow * stw - pdw + ks * dlw
        col_ok = col_ok + (ok & (iw >= 0) & (iw < W),)
        col_off = col_off + (iw * sxw + c_in * sxc,)
    return col_off, col_ok


@triton.jit
def input_row(x_ptr, x_img, ih, sxh, H, col_off, col_ok, KS: tl.constexpr):
    """One input row's KS column-shifted loads (raw values), zero outside the image."""
    row_ok = (ih >= 0) & (ih < H)
    vals = ()
    for ks in tl.static_range(KS):
        vals = vals + (tl.load(x_ptr + (x_img + ih * sxh) + col_off[ks],
                               mask=col_ok[ks] & row_ok, other=0.0),)
    return vals


@triton.jit
def _store_row(rows, taps, first: tl.constexpr, bias, res, oh, n, ow, k, ok, OH,
               out_ptr, syn, syc, syh, syw, KR: tl.constexpr, KS: tl.constexpr,
               DH: tl.constexpr, ACT: tl.constexpr, HAS_BIAS: tl.constexpr,
               HAS_RES: tl.constexpr):
    """Output row ``oh`` from the input rows ``first``, ``first + DH``, ... of ``rows``
    (KS loads each) and the taps, with the epilogue, stored."""
    acc = tl.zeros(ok.shape, dtype=tl.float32)
    for kr in tl.static_range(KR):
        for ks in tl.static_range(KS):
            acc += rows[(first + kr * DH) * KS + ks].to(tl.float32) * taps[kr * KS + ks]
    if HAS_BIAS:
        acc += bias
    if HAS_RES:
        acc += res.to(tl.float32)
    acc = activate(acc, ACT)
    tl.store(out_ptr + (n * syn + oh * syh + ow * syw + k * syc),
             acc.to(out_ptr.dtype.element_ty), mask=ok & (oh < OH))


def span_grid(geom, rows: int, block: int) -> tuple[int, int, int]:
    """(spans a row, row tiles, programs) of the launch grid: BLOCK_M = ``rows`` output
    rows x BLOCK_N = ``block`` values of the (column, channel) row a program."""
    _, oh, ow = geom.out_spatial
    spans, tiles_h = cdiv(ow * geom.k, block), cdiv(oh, rows)
    return spans, tiles_h, geom.n * tiles_h * spans


MAX_TAPS = 49  # filter taps unrolled at compile time (7x7)
MAX_ROW_LOADS = 112  # (input rows a program walks) x filter columns, unrolled
# Registers a thread may spend holding a window's raw input values when every load is
# issued first. Above it (tall or wide windows, fp32, 8 values a thread) that schedule
# spilled: random 5x5 and 7x7 layers (strided, dilated or fp32) ran up to 1.65x slower
# than the interleaved one in calls 106-107 (validation/results/depthwise_schedule_h100/).
LOADS_FIRST_REGISTERS = 64


def loads_first(geom, rows: int, block: int, warps: int) -> bool:
    """Whether a program issues all its input-row loads before its first store: when
    their raw values fit in ``LOADS_FIRST_REGISTERS`` 32-bit registers a thread."""
    per_thread = block // (32 * warps)
    return row_loads(geom, rows) * per_thread * geom.elem_bytes <= 4 * LOADS_FIRST_REGISTERS


def _tiles() -> tuple[tuple[int, int, int], ...]:
    """(ROWS, BLOCK, num_warps): 2 to 16 output rows, spans of 128 to 2048 elements, 4
    or 8 elements a thread (the register budget of ``depthwise_rows``' tiles: 8 a
    thread only up to 8 rows)."""
    out = []
    for rows in (2, 4, 8, 16):
        for per_thread in (4, 8):
            if per_thread == 8 and rows > 8:
                continue
            for warps in (1, 2, 4, 8):
                block = per_thread * 32 * warps
                if 128 <= block <= 2048:
                    out.append((rows, block, warps))
    return tuple(out)


DEPTHWISE_SPAN_TILES = _tiles()


class DepthwiseSpanFamily(KernelFamily):
    """Configs: BLOCK_M output rows x BLOCK_N elements of the (column, channel) row."""

    name = "depthwise_span"
    summary = ("2D depthwise FMA convolution over spans of the flattened (column, channel) "
               "row, any channel count, reusing each input row across output rows")
    configs = tuple(Config(BLOCK_M=rows, BLOCK_N=block, num_warps=wp, num_stages=1)
                    for rows, block, wp in DEPTHWISE_SPAN_TILES)

    def supports(self, geom) -> str | None:
        if geom.g == 1 or geom.cg != 1:
            return "not a depthwise convolution (one input channel a group)"
        if geom.dims != 2:
            return "2D only (3D depthwise runs on the depthwise family)"
        if geom.layout != "channels_last":
            # Correct in any layout; only channels_last makes a span contiguous.
            return "spans of the (column, channel) row are contiguous in channels_last only"
        if geom.r * geom.s > MAX_TAPS:
            return f"{geom.r * geom.s} filter taps are too many to unroll"
        return None

    def hard_ok(self, geom, cfg, device) -> str | None:
        return rows_limit(geom, cfg["BLOCK_M"], MAX_ROW_LOADS) or super().hard_ok(geom, cfg, device)

    def config_ok(self, geom, cfg, device) -> str | None:
        _, oh, ow = geom.out_spatial
        if cfg["BLOCK_N"] > max(128, next_pow2(ow * geom.k)):
            return f"a {cfg['BLOCK_N']}-element span exceeds the row's {ow * geom.k} outputs"
        if cfg["BLOCK_M"] > max(2, next_pow2(oh)):
            return f"{cfg['BLOCK_M']} rows exceed the {oh} output rows"
        return self.hard_ok(geom, cfg, device)

    def launch(self, call: ConvCall, cfg: Config) -> None:
        g = call.geom
        rows, block = cfg["BLOCK_M"], cfg["BLOCK_N"]
        _, oh, ow = g.out_spatial
        spans, tiles_h, programs = span_grid(g, rows, block)
        w, sw = oriented_filter(call)
        sx, sy = strides5(call.x), strides5(call.out)
        res = call.residual if call.residual is not None else call.out
        sr = strides5(res)
        launch_kernel(depthwise_span_kernel, (programs,),
            call.x, w, call.out, sy[0], sy[1], sy[3], sy[4],
            call.bias if call.bias is not None else call.out, res, sr[0], sr[1], sr[3], sr[4],
            g.h, g.w, oh, ow, spans, tiles_h, g.stride[2], g.pad[1], g.pad[2], g.dilation[2],
            sx[0], sx[1], sx[3], sx[4], sw[0], sw[3], sw[4],
            KTOT=g.k, MULT=g.kg, KR=g.r, KS=g.s, SH=g.stride[1], DH=g.dilation[1], ROWS=rows,
            BLOCK=block, ACT=call.activation, HAS_BIAS=call.bias is not None,
            HAS_RES=call.residual is not None, INT64=needs_int64(call),
            LOADS_FIRST=loads_first(g, rows, block, cfg["num_warps"]),
            num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
        )
