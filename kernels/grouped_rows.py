"""2D grouped convolution with few channels a group: packed matrix-unit tiles that reuse
each loaded input row across output rows.

``grouped_packed`` loads its input tile once per filter tap, and on an H100 those
nine loads of a 3x3 filter came from L2 (its profile: L2 88% busy, L1 hit rate 10%).
Here a program computes ROWS output rows x TILE_W output columns for ``GPT =
BLOCK_N // KG`` whole groups, as ``depthwise_rows`` does for one channel: it walks
the input rows its outputs need once, loads each row's ``GPT * CG``-channel run once
per filter column, and an output row is summed with ``tl.dot`` as soon as its last
input row is in. The weights of every tap are loaded once per program as
block-diagonal tiles (zero where an input and an output channel belong to
different groups). A 3x3 stride-1 filter costs (ROWS + 2) * 3 row loads for ROWS
output rows instead of 9 * ROWS.

As in ``grouped_packed``, the zeros are multiplied: an Inf or NaN in one group's
input turns the same pixel's outputs of the other groups in the tile into NaN.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, ConvCall, KernelFamily, channel_tile_too_wide, next_pow2
from .common import (
    cdiv,
    dot_precision,
    needs_int64,
    oriented_filter,
    out_args,
    pixel_block_fits,
    rows_limit,
    store_tile,
    strides5,
    tap_columns,
    upcast_dot,
)
from .grouped_packed import filter_columns, groups_per_tile, idle_tile, no_whole_group
from .launcher import launch_kernel

_RUNTIME_INTS = ["H", "W", "OH", "OW", "TILES_H", "TILES_W", "stw", "pdh", "pdw", "dlw"]


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def grouped_rows_kernel(
    x_ptr, w_ptr, out_ptr, syn, syc, syd, syh, syw,
    bias_ptr, res_ptr, srn, src, srd, srh, srw,
    C, K, H, W, OH, OW, TILES_H, TILES_W, stw, pdh, pdw, dlw,
    sxn, sxc, sxh, sxw, swk, swc, swr, sws,
    CG: tl.constexpr, KG: tl.constexpr, GPT: tl.constexpr,
    KR: tl.constexpr, KS: tl.constexpr, SH: tl.constexpr, DH: tl.constexpr,
    ROWS: tl.constexpr, TILE_W: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    ACT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr,
    PREC: tl.constexpr, UPCAST: tl.constexpr, INT64: tl.constexpr,
    TRANSPOSED: tl.constexpr = False,
):
    CRUN: tl.constexpr = GPT * CG  # input channels of the tile's groups
    KRUN: tl.constexpr = GPT * KG  # output channels of the tile's groups
    pid = tl.program_id(0)
    num_n = tl.cdiv(K, KRUN)
    # The group blocks of one pixel tile are neighbours: adjacent channel runs of the
    # same pixels share cache lines in L2.
    pid_m = pid // num_n
    pid_n = pid % num_n
    tw_id = pid_m % TILES_W
    rest = pid_m // TILES_W
    oh0 = (rest % TILES_H) * ROWS
    n = rest // TILES_H
    ow = tw_id * TILE_W + tl.arange(0, TILE_W)
    cols = tl.arange(0, BLOCK_N)
    k_glob = pid_n * KRUN + cols
    k_mask = (cols < KRUN) & (k_glob < K)
    k_grp = cols // KG  # group of each output column, relative to the tile
    c_rel = tl.arange(0, BLOCK_K)
    c_first = pid_n * CRUN
    c_ok = (c_rel < CRUN) & (c_first + c_rel < C)
    if INT64:
        x_img = n.to(tl.int64) * sxn + c_first.to(tl.int64) * sxc
    else:
        x_img = n * sxn + c_first * sxc
    w_col = filter_columns(k_glob, cols, k_grp, c_first, swk, swc, CG, KG, TRANSPOSED, INT64)
    # Block-diagonal weights of every tap, once per program: B[c, k] = w[k, c - group(k)
    # * CG, tap] inside the column's group, else 0. Tuple index kr * KS + ks.
    diag = ((c_rel // CG)[:, None] == k_grp[None, :]) & k_mask[None, :]
    w_tile = w_col[None, :] + (c_rel * swc)[:, None]
    taps = ()
    for kr in tl.static_range(KR):
        for ks in tl.static_range(KS):
            b = tl.load(w_ptr + w_tile + kr * swr + ks * sws, mask=diag, other=0.0)
            if UPCAST:
                b = b.to(tl.float32)
            taps = taps + (b,)
    col_ok, col_off = tap_columns(ow * stw - pdw, dlw, W, sxw, c_rel * sxc, c_ok, KS)
    ih0 = oh0 * SH - pdh
    # Input row i feeds output row o through filter row kr when i = o * SH + kr * DH;
    # an output row is summed once its last input row is loaded (see depthwise_rows).
    rows = ()
    for i in tl.static_range((ROWS - 1) * SH + (KR - 1) * DH + 1):
        ih = ih0 + i
        row_ok = (ih >= 0) & (ih < H)
        for ks in tl.static_range(KS):
            a = tl.load(x_ptr + (x_img + ih * sxh) + col_off[ks], mask=col_ok[ks] & row_ok,
                        other=0.0)
            if UPCAST:
                a = a.to(tl.float32)
            rows = rows + (a,)
        if i >= (KR - 1) * DH and (i - (KR - 1) * DH) % SH == 0:
            acc = tl.zeros((TILE_W, BLOCK_N), dtype=tl.float32)
            for kr in tl.static_range(KR):
                for ks in tl.static_range(KS):
                    acc = tl.dot(rows[(i - (KR - 1 - kr) * DH) * KS + ks], taps[kr * KS + ks],
                                 acc, input_precision=PREC)
            oh = oh0 + (i - (KR - 1) * DH) // SH + ow * 0
            store_tile(acc, n, 0, oh, ow, (oh < OH) & (ow < OW), k_glob, k_mask,
                       out_ptr, syn, syc, syd, syh, syw, bias_ptr, res_ptr,
                       srn, src, srd, srh, srw, HAS_BIAS, HAS_RES, ACT, INT64)


MAX_TAPS = 25  # filter taps unrolled at compile time, each a weight tile held (5x5)
MAX_ROW_LOADS = 64  # (input rows a program walks) x filter columns, unrolled
MAX_CG = 16  # input channels a group; wider groups fill matrix-unit tiles on their own
MAX_RUN = 64  # input channels of a tile's groups (the dot's reduction)


def _tiles() -> tuple[tuple[int, int, int, int], ...]:
    """(ROWS, TILE_W, BLOCK_N, num_warps): 2 to 8 output rows of 16 or 32 columns (a
    dot's M side is >= 16), 16 or 32 output channels of whole groups. Every tap's
    weight tile stays in registers: compiled for sm_90 (3x3, fp16), 32-channel tiles
    at 2 warps took 154 registers, 32x32 tiles 240 and 64-channel ones spilled, so
    those are left out; the rest take 92 to 118. 16 rows, for the 16-channel 2-warp
    tiles only: on ResNeXt-50's layer1 at batch 32 (4 channels a group) 2, 4 and 8 rows
    took 65, 54 and 48 us, each input row being read by fewer programs; 16 rows took 53
    there and 29 us on layer2.1 (8 channels a group), where 4 and 8 rows took 31.5."""
    tiles = [(rows, tw, bn, warps)
             for rows in (2, 4, 8)
             for tw, bn, warps in ((16, 16, 2), (16, 16, 4), (16, 32, 4), (16, 32, 8),
                                   (32, 16, 2), (32, 16, 4))]
    return tuple(tiles + [(16, 16, 16, 2), (16, 32, 16, 2)])


GROUPED_ROWS_TILES = _tiles()


class GroupedRowsFamily(KernelFamily):
    name = "grouped_rows"
    summary = ("2D grouped conv, 2-16 channels a group: packed matrix-unit tiles reusing "
               "each input row across output rows")
    configs = tuple(Config(BLOCK_M=rows * tw, TILE_W=tw, BLOCK_N=bn, num_warps=wp,
                           num_stages=1)
                    for rows, tw, bn, wp in GROUPED_ROWS_TILES)

    def supports(self, geom) -> str | None:
        if geom.g == 1:
            return "not a grouped convolution"
        if not 2 <= geom.cg <= MAX_CG:
            return f"{geom.cg} input channels a group (grouped_rows takes 2 to {MAX_CG})"
        if geom.dims != 2:
            return "2D only (3D grouped convs run on grouped_packed)"
        if geom.r * geom.s > MAX_TAPS:
            return f"{geom.r * geom.s} filter taps are too many to hold"
        return None

    def hard_ok(self, geom, cfg, device) -> str | None:
        why = no_whole_group(geom, cfg["BLOCK_N"])
        if why:
            return why
        gpt = groups_per_tile(geom, cfg["BLOCK_N"])
        if gpt * geom.cg > MAX_RUN:
            return f"{gpt} groups of {geom.cg} channels exceed a {MAX_RUN}-channel run"
        rows = cfg["BLOCK_M"] // cfg["TILE_W"]
        return rows_limit(geom, rows, MAX_ROW_LOADS) or super().hard_ok(geom, cfg, device)

    def config_ok(self, geom, cfg, device) -> str | None:
        bn = cfg["BLOCK_N"]
        return (channel_tile_too_wide(geom, bn) or idle_tile(geom, bn)
                or pixel_block_fits(geom, cfg, 16, 2) or self.hard_ok(geom, cfg, device))

    def launch(self, call: ConvCall, cfg: Config) -> None:
        g = call.geom
        tw, bn = cfg["TILE_W"], cfg["BLOCK_N"]
        rows = cfg["BLOCK_M"] // tw
        gpt = groups_per_tile(g, bn)
        _, oh, ow = g.out_spatial
        tiles_h, tiles_w = cdiv(oh, rows), cdiv(ow, tw)
        w, sw = oriented_filter(call)
        sx = strides5(call.x)
        grid = (g.n * tiles_h * tiles_w * cdiv(g.k, gpt * g.kg),)
        launch_kernel(grouped_rows_kernel, grid,
            call.x, w, *out_args(call),
            g.c, g.k, g.h, g.w, oh, ow, tiles_h, tiles_w, g.stride[2], g.pad[1], g.pad[2],
            g.dilation[2], sx[0], sx[1], sx[3], sx[4], sw[0], sw[1], sw[3], sw[4],
            CG=g.cg, KG=g.kg, GPT=gpt, KR=g.r, KS=g.s, SH=g.stride[1], DH=g.dilation[1],
            ROWS=rows, TILE_W=tw, BLOCK_N=bn, BLOCK_K=max(16, next_pow2(gpt * g.cg)),
            ACT=call.activation, HAS_BIAS=call.bias is not None,
            HAS_RES=call.residual is not None, PREC=dot_precision(call),
            UPCAST=upcast_dot(call), INT64=needs_int64(call), TRANSPOSED=call.transposed_w,
            num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
        )
