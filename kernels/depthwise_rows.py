"""2D depthwise convolution that reuses input rows in registers across output rows.

A program computes ROWS output rows x TILE_W output columns of one image for
BLOCK_N channels. It walks the input rows its outputs need once, loads each row
(one load per filter column, the shifted loads hitting L1), converts it to fp32
once and adds it into every output row that uses it: a 3x3 stride-1 filter costs
(ROWS + 2) * 3 row loads for ROWS output rows instead of the 9 * ROWS of
``depthwise``. The weights are loaded once per program. The vertical stride and
dilation are compile-time so that which input row feeds which output row is
known when the kernel is built (the H100 profile of ``depthwise`` showed it
issue-bound: 46 to 114 instructions per output for 9 FMAs).
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, ConvCall, KernelFamily, channel_tile_too_wide
from .common import (
    cdiv,
    needs_int64,
    out_args,
    pixel_block_fits,
    rows_limit,
    store_tile,
    strides5,
    tap_columns,
)
from .launcher import launch_kernel

_RUNTIME_INTS = ["H", "W", "OH", "OW", "TILES_H", "TILES_W", "stw", "pdh", "pdw", "dlw"]


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def depthwise_rows_kernel(
    x_ptr, w_ptr, out_ptr, syn, syc, syd, syh, syw,
    bias_ptr, res_ptr, srn, src, srd, srh, srw,
    KTOT, H, W, OH, OW, TILES_H, TILES_W, stw, pdh, pdw, dlw,
    sxn, sxc, sxh, sxw, swk, swr, sws,
    MULT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr, SH: tl.constexpr,
    DH: tl.constexpr, ROWS: tl.constexpr, TILE_W: tl.constexpr, BLOCK_N: tl.constexpr,
    ACT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr, INT64: tl.constexpr,
):
    # Axis 0 walks spatial tiles fastest: programs in flight share their halos in L2.
    pid = tl.program_id(0)
    tw_id = pid % TILES_W
    rest = pid // TILES_W
    oh0 = (rest % TILES_H) * ROWS
    n = rest // TILES_H
    ow = tw_id * TILE_W + tl.arange(0, TILE_W)
    offs_k = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    k_mask = offs_k < KTOT
    if MULT == 1:
        c_in = offs_k
    else:
        c_in = offs_k // MULT
    if INT64:
        x_img = n.to(tl.int64) * sxn
        x_col = c_in.to(tl.int64) * sxc
        w_col = offs_k.to(tl.int64) * swk
    else:
        x_img = n * sxn
        x_col = c_in * sxc
        w_col = offs_k * swk
    # Filter taps, fp32, once per program: tuple index kr * KS + ks.
    taps = ()
    for kr in tl.static_range(KR):
        for ks in tl.static_range(KS):
            wv = tl.load(w_ptr + w_col + kr * swr + ks * sws, mask=k_mask, other=0.0)
            taps = taps + (wv.to(tl.float32),)
    col_ok, col_off = tap_columns(ow * stw - pdw, dlw, W, sxw, x_col, k_mask, KS)
    ih0 = oh0 * SH - pdh
    # Input row i feeds output row o through filter row kr when i = o * SH + kr * DH.
    # Rows are loaded in order and an output row is finished as soon as its last
    # input row is in, so only about KR * DH rows are live at once.
    rows = ()
    for i in tl.static_range((ROWS - 1) * SH + (KR - 1) * DH + 1):
        ih = ih0 + i
        row_ok = (ih >= 0) & (ih < H)
        for ks in tl.static_range(KS):
            xv = tl.load(x_ptr + (x_img + ih * sxh) + col_off[ks], mask=col_ok[ks] & row_ok,
                         other=0.0)
            rows = rows + (xv.to(tl.float32),)
        if i >= (KR - 1) * DH and (i - (KR - 1) * DH) % SH == 0:
            # Output row (i - (KR - 1) * DH) // SH: its last input row is i (constexprs
            # cannot be re-bound in an unrolled loop, hence the spelled-out indices).
            acc = tl.zeros((TILE_W, BLOCK_N), dtype=tl.float32)
            for kr in tl.static_range(KR):
                for ks in tl.static_range(KS):
                    acc += rows[(i - (KR - 1 - kr) * DH) * KS + ks] * taps[kr * KS + ks][None, :]
            oh = oh0 + (i - (KR - 1) * DH) // SH + ow * 0
            store_tile(acc, n, 0, oh, ow, (oh < OH) & (ow < OW), offs_k, k_mask,
                       out_ptr, syn, syc, syd, syh, syw, bias_ptr, res_ptr,
                       srn, src, srd, srh, srw, HAS_BIAS, HAS_RES, ACT, INT64)


MAX_TAPS = 49  # filter taps unrolled at compile time (7x7)
MAX_ROW_LOADS = 112  # (input rows a program walks) x filter columns, unrolled


def _tiles() -> tuple[tuple[int, int, int, int], ...]:
    """(ROWS, TILE_W, BLOCK_N, num_warps): 2 to 16 output rows, 8 to 32 columns, 16 to
    128 channels, 4 or 8 values of a loaded row a thread. Compiled for sm_90 (3x3,
    fp16; ``validation/gpu/sass_count.py``), 4 values a thread take about 80 registers
    and 8 take 130 to 160 (every load is issued early), while 16 took 220 and more:
    the 8-value tiles are kept to 8 rows and the 16-value ones left out."""
    out = []
    for rows in (2, 4, 8, 16):
        for tw in (8, 16, 32):
            for bn in (16, 32, 64, 128):
                elems = tw * bn
                if not 128 <= elems <= 2048:
                    continue
                for warps in (1, 2, 4, 8):
                    per_thread = elems // (32 * warps)
                    if per_thread == 4 or (per_thread == 8 and rows <= 8):
                        out.append((rows, tw, bn, warps))
    return tuple(out)


DEPTHWISE_ROWS_TILES = _tiles()


class DepthwiseRowsFamily(KernelFamily):
    name = "depthwise_rows"
    summary = "2D depthwise FMA convolution reusing each input row across output rows"
    configs = tuple(Config(BLOCK_M=rows * tw, TILE_W=tw, BLOCK_N=bn, num_warps=wp,
                           num_stages=1)
                    for rows, tw, bn, wp in DEPTHWISE_ROWS_TILES)

    def supports(self, geom) -> str | None:
        if geom.g == 1 or geom.cg != 1:
            return "not a depthwise convolution (one input channel a group)"
        if geom.dims != 2:
            return "2D only (3D depthwise runs on the depthwise family)"
        if geom.r * geom.s > MAX_TAPS:
            return f"{geom.r * geom.s} filter taps are too many to unroll"
        return None

    def hard_ok(self, geom, cfg, device) -> str | None:
        rows = cfg["BLOCK_M"] // cfg["TILE_W"]
        return rows_limit(geom, rows, MAX_ROW_LOADS) or super().hard_ok(geom, cfg, device)

    def config_ok(self, geom, cfg, device) -> str | None:
        return (channel_tile_too_wide(geom, cfg["BLOCK_N"])
                or pixel_block_fits(geom, cfg, 4, 1) or self.hard_ok(geom, cfg, device))

    def launch(self, call: ConvCall, cfg: Config) -> None:
        g = call.geom
        tw = cfg["TILE_W"]
        rows = cfg["BLOCK_M"] // tw
        bn = cfg["BLOCK_N"]
        _, oh, ow = g.out_spatial
        tiles_h, tiles_w = cdiv(oh, rows), cdiv(ow, tw)
        sx, sw = strides5(call.x), strides5(call.w)
        grid = (g.n * tiles_h * tiles_w, cdiv(g.k, bn))
        launch_kernel(depthwise_rows_kernel, grid,
            call.x, call.w, *out_args(call),
            g.k, g.h, g.w, oh, ow, tiles_h, tiles_w, g.stride[2], g.pad[1], g.pad[2],
            g.dilation[2], sx[0], sx[1], sx[3], sx[4], sw[0], sw[3], sw[4],
            MULT=g.kg, KR=g.r, KS=g.s, SH=g.stride[1], DH=g.dilation[1], ROWS=rows,
            TILE_W=tw, BLOCK_N=bn, ACT=call.activation, HAS_BIAS=call.bias is not None,
            HAS_RES=call.residual is not None, INT64=needs_int64(call),
            num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
        )
