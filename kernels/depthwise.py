"""Depthwise convolution (one input channel a group) over 2D tiles of output pixels.

A program computes a TILE_H x TILE_W block of output pixels of one image (and
one output depth) for BLOCK_N channels, with fused multiply-adds. The filter
taps are unrolled; the loads of neighbouring taps read overlapping input rows,
so a square block re-reads its halo from L1 instead of pulling each input row
from L2 once per filter row, which is what a flat run of pixels along one row
does (``grouped_direct``). Channels are innermost in NHWC, so each pixel's
BLOCK_N channels are one contiguous (vectorised) load. A channel multiplier
(K = m * C) is supported: output channel k reads input channel k // m.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, ConvCall, KernelFamily, channel_tile_too_wide
from .common import (
    cdiv,
    needs_int64,
    oriented_filter,
    out_args,
    pixel_block,
    pixel_block_fits,
    pixel_grid,
    store_tile,
    strides5,
)
from .launcher import launch_kernel

_RUNTIME_INTS = ["D", "H", "W", "OD", "OH", "OW", "TILES_H", "TILES_W",
                 "std", "sth", "stw", "pdd", "pdh", "pdw", "dld", "dlh", "dlw"]


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def depthwise_kernel(
    x_ptr, w_ptr, out_ptr, syn, syc, syd, syh, syw,
    bias_ptr, res_ptr, srn, src, srd, srh, srw,
    KTOT, D, H, W, OD, OH, OW, TILES_H, TILES_W,
    std, sth, stw, pdd, pdh, pdw, dld, dlh, dlw,
    sxn, sxc, sxd, sxh, sxw, swk, swt, swr, sws,
    MULT: tl.constexpr, KT: tl.constexpr, KR: tl.constexpr, KS: tl.constexpr,
    TILE_H: tl.constexpr, TILE_W: tl.constexpr, BLOCK_N: tl.constexpr,
    ACT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr, INT64: tl.constexpr,
):
    # Axis 0 walks spatial tiles fastest, so the programs in flight together work
    # on neighbouring tiles of the same channels and share their halos in L2.
    n, od, oh, ow, m_mask = pixel_block(tl.program_id(0), OD, OH, OW, TILES_H, TILES_W,
                                        TILE_H, TILE_W)
    offs_k = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    k_mask = offs_k < KTOT
    if MULT == 1:
        c_in = offs_k
    else:
        c_in = offs_k // MULT
    id0 = od * std - pdd
    ih0 = oh * sth - pdh
    iw0 = ow * stw - pdw
    if INT64:
        x_base = n.to(tl.int64) * sxn
        x_col = c_in.to(tl.int64) * sxc
        w_col = offs_k.to(tl.int64) * swk
    else:
        x_base = n * sxn
        x_col = c_in * sxc
        w_col = offs_k * swk
    acc = tl.zeros((TILE_H * TILE_W, BLOCK_N), dtype=tl.float32)
    for kt in tl.static_range(KT):
        idd = id0 + kt * dld
        d_ok = (idd >= 0) & (idd < D)
        for kr in tl.static_range(KR):
            ih = ih0 + kr * dlh
            h_ok = m_mask & d_ok & (ih >= 0) & (ih < H)
            for ks in tl.static_range(KS):
                iw = iw0 + ks * dlw
                row_ok = h_ok & (iw >= 0) & (iw < W)
                x_ptrs = x_ptr + (x_base + idd * sxd + ih * sxh + iw * sxw)[:, None] \
                    + x_col[None, :]
                xv = tl.load(x_ptrs, mask=row_ok[:, None] & k_mask[None, :], other=0.0)
                wv = tl.load(w_ptr + w_col + kt * swt + kr * swr + ks * sws, mask=k_mask,
                             other=0.0)
                acc += xv.to(tl.float32) * wv.to(tl.float32)[None, :]
    store_tile(acc, n, od, oh, ow, m_mask, offs_k, k_mask,
               out_ptr, syn, syc, syd, syh, syw, bias_ptr, res_ptr, srn, src, srd, srh, srw,
               HAS_BIAS, HAS_RES, ACT, INT64)


MAX_TAPS = 125  # filter taps unrolled at compile time (5x5x5)


def _tiles() -> tuple[tuple[int, int, int, int], ...]:
    """(TILE_H, TILE_W, BLOCK_N, num_warps): pixel blocks from a row run to a square,
    channel blocks from one 32-byte sector (16 fp16) to 256 bytes; 4 to 32
    accumulators a thread. Every tap's load is in flight at once, so registers grow
    with the tile: on an H100 a 32-accumulator tile took 150 registers a thread
    (19% occupancy), which is why small tiles and few warps are in the space."""
    out = []
    for th, tw in ((1, 16), (1, 32), (2, 8), (2, 16), (4, 8), (4, 16), (8, 8), (8, 16)):
        for bn in (16, 32, 64, 128):
            elems = th * tw * bn
            if not 256 <= elems <= 8192:
                continue
            for warps in (1, 2, 4, 8):
                per_thread = elems // (32 * warps)
                if 4 <= per_thread <= 32 and (warps > 1 or elems == 256):
                    out.append((th, tw, bn, warps))
    return tuple(out)


DEPTHWISE_TILES = _tiles()


class DepthwiseFamily(KernelFamily):
    name = "depthwise"
    summary = "depthwise (channel multiplier m >= 1) FMA convolution over 2D pixel tiles"
    configs = tuple(Config(BLOCK_M=th * tw, TILE_W=tw, BLOCK_N=bn, num_warps=wp, num_stages=1)
                    for th, tw, bn, wp in DEPTHWISE_TILES)

    def supports(self, geom) -> str | None:
        if geom.g == 1 or geom.cg != 1:
            return "not a depthwise convolution (one input channel a group)"
        if geom.t * geom.r * geom.s > MAX_TAPS:
            return f"{geom.t * geom.r * geom.s} filter taps are too many to unroll"
        return None

    def config_ok(self, geom, cfg, device) -> str | None:
        return (channel_tile_too_wide(geom, cfg["BLOCK_N"])
                or pixel_block_fits(geom, cfg, 8, 1))

    def launch(self, call: ConvCall, cfg: Config) -> None:
        g = call.geom
        tw = cfg["TILE_W"]
        th = cfg["BLOCK_M"] // tw
        bn = cfg["BLOCK_N"]
        pixel_programs, tiles_h, tiles_w = pixel_grid(g, cfg["BLOCK_M"], tw)
        od, oh, ow = g.out_spatial
        w, sw = oriented_filter(call)
        grid = (pixel_programs, cdiv(g.k, bn))
        launch_kernel(depthwise_kernel, grid,
            call.x, w, *out_args(call),
            g.k, g.d, g.h, g.w, od, oh, ow, tiles_h, tiles_w,
            *g.stride, *g.pad, *g.dilation, *strides5(call.x), sw[0], *sw[2:],
            MULT=g.kg, KT=g.t, KR=g.r, KS=g.s, TILE_H=th, TILE_W=tw, BLOCK_N=bn,
            ACT=call.activation, HAS_BIAS=call.bias is not None,
            HAS_RES=call.residual is not None, INT64=needs_int64(call),
            num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
        )
