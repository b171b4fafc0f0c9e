"""Implicit-GEMM convolution whose operands move by TMA boxes (Hopper).

At stride 1 the input pixels one filter tap reads for a TILE_H x TILE_W block of
output pixels are themselves a TILE_H x TILE_W block of the input, shifted by the
tap's offset. With the channels_last input seen as a 5D tensor [N, D, H, W, C],
each (tap, channel block) step of the reduction is one TMA box
[1, 1, TILE_H, TILE_W, BLOCK_K]: the copy engine fills the part of a box that lies
past an edge (the padding, the image's end) with zeros, so the loop carries no
per-row index or mask arithmetic and its operands land in shared memory in the
layout wgmma reads. The filter is read as a [K, T*R*S*C] matrix in [BLOCK_N, BLOCK_K]
boxes (BLOCK_K divides C, so a box stays within its tap), and the output tile leaves
by a TMA store that clips at the image's edges. Bias, residual and activation are
applied before the store.

At a stride (std, sth, stw) the input is seen as
[N*D, H/sth, sth, W/stw, stw*C] (``phase_view``): row h = sth*hh + phase, a pixel's
column phases with their channels form one row, and the frames of every image are one
axis. A tap whose offset is stride * whole + phase reads the box
[1, TILE_H, 1, TILE_W, BLOCK_K] at (n*D + d, oh0 + whole_h, phase_h, ow0 + whole_w,
phase_w*C + c0): the output pixels' inputs again, with the edges' zero fill as padding.
A frame d past the input's depth (depth padding) moves the box wholly above row 0,
where TMA fills all of it with zeros. H or W need not be multiples of the stride where
the outputs never read the far edge's padding and no tile reaches past the output
(``phase_rejects``): the view's last phase row (column) then lies past the image and
only a tile past the output would read it (SD-VAE's 257-, 129- and 65-pixel
downsamplers).

A box may hold several images: [images, 1, TILE_H, TILE_W, BLOCK_K] with images x
TILE_H x TILE_W = BLOCK_M (``box_images``), where fewer rows divide the output's height
better (28-row maps at batch 32: 4 rows x 4 images, none past the map, where 16 rows
would leave 4 empty). dgrad calls keep one image a box.

A dgrad call through this kernel (``ConvCall.transposed_w`` with ``flip_taps``)
reads the stored filter's [BLOCK_K, BLOCK_N] boxes (rows = the reduction's
channels) at the reversed tap; columns past the tap's channels only feed output
channels that the store clips.

Where a tensor breaks TMA's rules at run time (an address or pitch not 16-byte
aligned, a filter that is not channels_last) the call runs through
``implicit_gemm``'s pointer kernel with the same BLOCK_M x BLOCK_N x BLOCK_K tile.
Launches holding descriptors are not replayed by the fast path (``launcher.Plan``
refuses them).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from .base import Config, ConvCall, KernelFamily, next_pow2
from .common import (
    activate,
    cdiv,
    dot_precision,
    next_step,
    persistent_cap,
    persistent_grid,
    pixel_grid,
    tile_ids,
    upcast_dot,
)
from .implicit_gemm import gemm_smem, launch_igemm
from .launcher import launch_kernel
from .pointwise_tma import tma_missing, tma_rows_rejects

_RUNTIME_INTS = ["PIX_TILES", "OD", "KTOT", "C", "D", "T", "R", "S", "pdd", "pdh", "pdw",
                 "dld", "dlh", "dlw", "std", "sth", "stw", "TILES_H", "TILES_W"]


@triton.jit
def box_tile_origin(tile, PIX_TILES, KTOT, OD, TILES_H, TILES_W, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, TILE_W: tl.constexpr, IMAGES: tl.constexpr,
                    GROUP_M: tl.constexpr):
    """Output tile ``tile`` (grouped order) -> first image n, depth od, the pixel box's
    first row and column, and its first output channel."""
    TILE_H: tl.constexpr = BLOCK_M // TILE_W // IMAGES
    pid_m, pid_n = tile_ids(tile, PIX_TILES, tl.cdiv(KTOT, BLOCK_N), GROUP_M)
    tw = pid_m % TILES_W
    rest = pid_m // TILES_W
    oh0 = (rest % TILES_H) * TILE_H
    rest = rest // TILES_H
    return (rest // OD) * IMAGES, rest % OD, oh0, tw * TILE_W, pid_n * BLOCK_N


@triton.jit
def box_conv_tile(x_desc, w_desc, n, od, oh0, ow0, off_n, KTOT, C, D, T, R, S, pdd, pdh,
                  pdw, dld, dlh, dlw, std, sth, stw, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, TILE_H: tl.constexpr,
                  PREC: tl.constexpr, UPCAST: tl.constexpr, DGRAD: tl.constexpr,
                  STRIDED: tl.constexpr):
    """acc^T, [BLOCK_N channels, BLOCK_M pixels] in float32, of one output tile: one input
    box and one filter box a (tap, channel block) step. STRIDED: ``x_desc`` is the
    phase view [N*D, H/sth, sth, W/stw, stw*C] (``phase_view``), where a tap's input
    pixels are again one box: the frame, phase row and column its offset falls on,
    shifted by the offset's whole strides."""
    # Origin of tap (0, 0, 0)'s box; a tap adds its dilated offset (negative
    # coordinates are padding: TMA fills them with zeros).
    id0 = od - pdd
    ih0 = oh0 - pdh
    iw0 = ow0 - pdw
    c_blocks = tl.cdiv(C, BLOCK_K)
    taps = T * R * S
    # The accumulator is [channels, pixels]: the pixel box (a [TILE_H, TILE_W] block
    # flattened) stays in shared memory only as wgmma's B operand (Triton 3.6 folds
    # that reshape into a shared-memory view; as the A operand it is copied to
    # registers), so the product is acc^T = W A^T and the tile is transposed once, at
    # the store.
    acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    cb = 0
    ks = 0
    kr = 0
    kt = 0
    for _ in range(0, taps * c_blocks):
        c0 = cb * BLOCK_K
        if STRIDED:
            # floor((tap offset) / stride), numerators kept non-negative (C division
            # truncates): offset = stride * whole + phase, 0 <= phase < stride.
            whole_h = (kr * dlh + pdh * sth - pdh) // sth - pdh
            whole_w = (ks * dlw + pdw * stw - pdw) // stw - pdw
            d = od * std + kt * dld - pdd
            in_depth = (d >= 0) & (d < D)
            a = x_desc.load([n * D + tl.where(in_depth, d, 0),
                             tl.where(in_depth, oh0 + whole_h, -TILE_H),
                             kr * dlh - pdh - whole_h * sth, ow0 + whole_w,
                             (ks * dlw - pdw - whole_w * stw) * C + c0])
        else:
            a = x_desc.load([n, id0 + kt * dld, ih0 + kr * dlh, iw0 + ks * dlw, c0])
        a = a.reshape(BLOCK_M, BLOCK_K)
        tap = (kt * R + kr) * S + ks
        # The filter is a 2D box (a reshaped box would be copied to registers too).
        if DGRAD:  # stored filter [K_red, taps * C_out] at the reversed tap
            w = w_desc.load([c0, (taps - 1 - tap) * KTOT + off_n]).T
        else:  # C % BLOCK_K == 0: a box never reaches into the next tap's channels
            w = w_desc.load([off_n, tap * C + c0])
        if UPCAST:
            a = a.to(tl.float32)
            w = w.to(tl.float32)
        acc = tl.dot(w, a.T, acc, input_precision=PREC)
        cb, ks, kr, kt = next_step(cb, ks, kr, kt, c_blocks, R, S)
    return acc


@triton.jit
def box_conv_epilogue(acc, y_desc, r_desc, bias_ptr, n, od, oh0, ow0, off_n, KTOT,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, TILE_W: tl.constexpr,
                      IMAGES: tl.constexpr, ACT: tl.constexpr, HAS_BIAS: tl.constexpr,
                      HAS_RES: tl.constexpr):
    """Bias, residual and activation on acc^T, then the output box's TMA store."""
    TILE_H: tl.constexpr = BLOCK_M // TILE_W // IMAGES
    if HAS_BIAS:
        offs_n = off_n + tl.arange(0, BLOCK_N)
        acc += tl.load(bias_ptr + offs_n, mask=offs_n < KTOT, other=0.0).to(tl.float32)[:, None]
    out = acc.T
    if HAS_RES:
        r = r_desc.load([n, od, oh0, ow0, off_n]).reshape(BLOCK_M, BLOCK_N)
        out += r.to(tl.float32)
    out = activate(out, ACT)
    out = out.to(y_desc.dtype).reshape(IMAGES, 1, TILE_H, TILE_W, BLOCK_N)
    y_desc.store([n, od, oh0, ow0, off_n], out)  # TMA clips past the image and K


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def igemm_tma_kernel(
    x_desc, w_desc, y_desc, r_desc, bias_ptr,
    PIX_TILES, OD, KTOT, C, D, T, R, S, pdd, pdh, pdw, dld, dlh, dlw, std, sth, stw, TILES_H,
    TILES_W,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    TILE_W: tl.constexpr, IMAGES: tl.constexpr, GROUP_M: tl.constexpr, ACT: tl.constexpr,
    HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr, PREC: tl.constexpr,
    UPCAST: tl.constexpr, DGRAD: tl.constexpr, STRIDED: tl.constexpr, PROGRAMS: tl.constexpr,
):
    """One output tile a program (PROGRAMS = 0), or a persistent grid of PROGRAMS programs
    walking the tiles in grouped order."""
    TILE_H: tl.constexpr = BLOCK_M // TILE_W // IMAGES
    if PROGRAMS == 0:
        n, od, oh0, ow0, off_n = box_tile_origin(tl.program_id(0), PIX_TILES, KTOT, OD,
                                                 TILES_H, TILES_W, BLOCK_M, BLOCK_N, TILE_W,
                                                 IMAGES, GROUP_M)
        acc = box_conv_tile(x_desc, w_desc, n, od, oh0, ow0, off_n, KTOT, C, D, T, R, S, pdd,
                            pdh, pdw, dld, dlh, dlw, std, sth, stw, BLOCK_M, BLOCK_N, BLOCK_K,
                            TILE_H, PREC, UPCAST, DGRAD, STRIDED)
        box_conv_epilogue(acc, y_desc, r_desc, bias_ptr, n, od, oh0, ow0, off_n, KTOT,
                          BLOCK_M, BLOCK_N, TILE_W, IMAGES, ACT, HAS_BIAS, HAS_RES)
    else:
        start = tl.program_id(0)
        # The epilogue walks its own copy of the tile counter: the flattened loop issues
        # the next tile's loads before this tile's store, and a counter shared by both
        # ends of the loop would tie them together.
        tile_c = start - PROGRAMS
        for tile in tl.range(start, PIX_TILES * tl.cdiv(KTOT, BLOCK_N), PROGRAMS,
                             flatten=True):
            n, od, oh0, ow0, off_n = box_tile_origin(tile, PIX_TILES, KTOT, OD, TILES_H,
                                                     TILES_W, BLOCK_M, BLOCK_N, TILE_W,
                                                     IMAGES, GROUP_M)
            acc = box_conv_tile(x_desc, w_desc, n, od, oh0, ow0, off_n, KTOT, C, D, T, R, S,
                                pdd, pdh, pdw, dld, dlh, dlw, std, sth, stw, BLOCK_M, BLOCK_N,
                                BLOCK_K, TILE_H, PREC, UPCAST, DGRAD, STRIDED)
            tile_c += PROGRAMS
            n, od, oh0, ow0, off_n = box_tile_origin(tile_c, PIX_TILES, KTOT, OD, TILES_H,
                                                     TILES_W, BLOCK_M, BLOCK_N, TILE_W,
                                                     IMAGES, GROUP_M)
            box_conv_epilogue(acc, y_desc, r_desc, bias_ptr, n, od, oh0, ow0, off_n, KTOT,
                              BLOCK_M, BLOCK_N, TILE_W, IMAGES, ACT, HAS_BIAS, HAS_RES)


def pixels_view(t: torch.Tensor) -> tuple[list[int], list[int]] | None:
    """(shape, strides) of ``t`` (N, C, D, H, W) as a TMA tensor [N, D, H, W, C], or None
    when its channels are not contiguous or an address or pitch is not 16-byte aligned.
    Size-1 dims get a dense stride: torch leaves theirs arbitrary and TMA checks them."""
    n, c, d, h, w = t.shape
    if t.data_ptr() % 16 or (c > 1 and t.stride(1) != 1):
        return None
    dense = (d * h * w * c, 1, h * w * c, w * c, c)
    strides = [st if size > 1 else ds for st, ds, size in zip(t.stride(), dense, t.shape)]
    if any(st * t.element_size() % 16 for i, st in enumerate(strides) if i != 1):
        return None
    return [n, d, h, w, c], [strides[0], strides[2], strides[3], strides[4], 1]


def phase_view(t: torch.Tensor, sth: int, stw: int) -> tuple[list[int], list[int]] | None:
    """(shape, strides) of ``t`` (N, C, D, H, W) as the TMA tensor
    [N*D, ceil(H/sth), sth, ceil(W/stw), stw*C]: input row h = sth*hh + phase, a pixel's
    stw column phases with their channels one contiguous row, and every image's frames
    one axis. Where H or W is not a multiple of its stride, the last phase row or column
    reaches past the image (``phase_rejects`` keeps every box off it). None when the
    pixels are not dense rows of C channels, an image's frames do not follow each other,
    or TMA's 16-byte rules fail."""
    n, c, d, h, w = t.shape
    base = pixels_view(t)
    if base is None or (w > 1 and base[1][3] != c):
        return None
    sn, sd, sh, _, _ = base[1]
    if d > 1 and n > 1 and sn != d * sd:
        return None
    return ([n * d, cdiv(h, sth), sth, cdiv(w, stw), stw * c],
            [sd if d > 1 else sn, sth * sh, sh, stw * c, 1])


def phase_rejects(geom) -> str | None:
    """Why a strided conv's taps are not boxes of ``phase_view`` (None: they are). Where
    H (or W) is not a multiple of the stride, the view's last phase row holds rows past
    the image (the next image's, or past the tensor): the outputs must not read the far
    edge's padding, and ``phase_tiles_reject`` keeps tiles off it."""
    _, oh, ow = geom.out_spatial
    for axis, size, out, taps, st, dil, lo in (
            ("height", geom.h, oh, geom.r, geom.stride[1], geom.dilation[1], geom.pad[1]),
            ("width", geom.w, ow, geom.s, geom.stride[2], geom.dilation[2], geom.pad[2])):
        if size % st and (out - 1) * st + (taps - 1) * dil - lo > size - 1:
            return (f"strided: the {axis} {size} is not a multiple of the stride {st} and "
                    "the outputs read padding past its far edge (no phase box)")
    return None


def phase_tiles_reject(geom, cfg: Config) -> str | None:
    """Why ``cfg``'s pixel tiles would reach past the output along an axis that is not a
    multiple of the stride, where a tile past the output would read the phase view's
    past-the-image row or column (None: they do not)."""
    if geom.stride == (1, 1, 1):
        return None
    _, oh, ow = geom.out_spatial
    tile_w = cfg["TILE_W"]
    rows = box_rows(geom, cfg["BLOCK_M"], tile_w)[0]
    if geom.h % geom.stride[1] and oh % rows:
        return f"{rows}-row tiles reach past the {oh} output rows (H={geom.h} not whole strides)"
    if geom.w % geom.stride[2] and ow % tile_w:
        return (f"{tile_w}-column tiles reach past the {ow} output columns "
                f"(W={geom.w} not whole strides)")
    return None


def filter_view(w: torch.Tensor) -> tuple[list[int], list[int]] | None:
    """(shape, strides) of the stored filter [K, C, T, R, S] as a TMA matrix
    [K, T*R*S*C] (channels_last: a tap's channels follow the previous tap's), or None
    when it is not one."""
    k, c, t, r, s = w.shape
    dense = (None, 1, r * s * c, s * c, c)
    if w.data_ptr() % 16 or any(size > 1 and st != want for st, want, size in
                                zip(w.stride()[1:], dense[1:], w.shape[1:])):
        return None
    if (w.stride(0) * w.element_size()) % 16:
        return None
    return [k, t * r * s * c], [w.stride(0), 1]


def descriptor(t: torch.Tensor, view: tuple[list[int], list[int]], box: list[int]):
    return TensorDescriptor(t, view[0], view[1], box)


def filled(extent: int, block: int) -> float:
    """Share of ``block``-sized tiles over ``extent`` that lies inside it."""
    return extent / (cdiv(extent, block) * block)


def box_images(n: int, oh: int, block_m: int, tile_w: int) -> tuple[int, int]:
    """(TILE_H, images) of a BLOCK_M-pixel box TILE_W wide: the power-of-two row count
    whose tiles waste the fewest pixels past the output's rows and past its batch (a box
    of several images, [images, 1, TILE_H, TILE_W, BLOCK_K], where TILE_H rows divide OH
    better than BLOCK_M / TILE_W do: 4 rows x 4 images on 28-row maps at batch 32,
    instead of 16 rows of which 4 are past the map). Ties keep the taller box."""
    best = (0.0, block_m // tile_w, 1)
    rows = block_m // tile_w
    while rows >= 1:
        images = block_m // tile_w // rows
        used = filled(oh, rows) * filled(n, images)
        if used > best[0] + 1e-9:
            best = (used, rows, images)
        rows //= 2
    return best[1], best[2]


def box_use(geom, block_m: int, tile_w: int) -> float:
    """Share of a box's pixels that lie inside the output: rows past OH, columns past OW
    and images past the batch are wasted (``box_images``)."""
    _, oh, ow = geom.out_spatial
    rows, images = box_images(geom.n, oh, block_m, tile_w)
    return filled(oh, rows) * filled(ow, tile_w) * filled(geom.n, images)


def box_rows(geom, block_m: int, tile_w: int, one_image: bool = False) -> tuple[int, int]:
    """(TILE_H, images a box) of a launch: ``box_images``, or one image a box with
    ``one_image`` (dgrad calls) and at a strided 3D conv (the phase view's frames are one
    axis)."""
    if one_image or (geom.d > 1 and geom.stride != (1, 1, 1)):
        return block_m // tile_w, 1
    return box_images(geom.n, geom.out_spatial[1], block_m, tile_w)


def box_grid(geom, block_m: int, tile_w: int,
             one_image: bool = False) -> tuple[int, int, int, int, int]:
    """(pixel tiles, tiles along OH, tiles along OW, TILE_H, images a box) of the box
    families' launch (``box_rows``)."""
    rows, images = box_rows(geom, block_m, tile_w, one_image)
    return (*pixel_grid(geom, block_m, tile_w, images), rows, images)


def launch_igemm_tma(call: ConvCall, cfg: Config, programs_cap: int = 0) -> None:
    """One program a tile, or with ``programs_cap`` a persistent grid of at most that many
    programs walking the tiles."""
    g = call.geom
    bm, bn, bk, tile_w = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"], cfg["TILE_W"]
    # dgrad calls keep one-image boxes (the twin's rows were measured with them).
    programs, tiles_h, tiles_w, tile_h, images = box_grid(g, bm, tile_w,
                                                          one_image=call.transposed_w)
    strided = g.stride != (1, 1, 1)
    if call.transposed_w != call.flip_taps and g.t * g.r * g.s > 1:
        raise RuntimeError("implicit_gemm_tma reads a transposed filter only with its taps "
                           "reversed (a dgrad call)")
    x_view = phase_view(call.x, g.stride[1], g.stride[2]) if strided else pixels_view(call.x)
    views = [x_view, filter_view(call.w), pixels_view(call.out)]
    if call.residual is not None:
        views.append(pixels_view(call.residual))
    bias_ok = call.bias is None or call.bias.data_ptr() % 16 == 0
    if any(v is None for v in views) or not bias_ok:
        launch_igemm(call, cfg)  # same tile, pointer loads: correct for any strides
        return
    x_box = [images, tile_h, 1, tile_w, bk] if strided else [images, 1, tile_h, tile_w, bk]
    y_box = [images, 1, tile_h, tile_w, bn]
    w_box = [bk, bn] if call.transposed_w else [bn, bk]
    y_desc = descriptor(call.out, views[2], y_box)
    r_desc = descriptor(call.residual, views[3], y_box) if call.residual is not None else y_desc
    tiles = programs * cdiv(g.k, bn)
    launch_kernel(igemm_tma_kernel, persistent_grid(tiles, programs_cap),
        descriptor(call.x, views[0], x_box), descriptor(call.w, views[1], w_box), y_desc,
        r_desc, call.bias if call.bias is not None else call.out,
        programs, g.out_spatial[0], g.k, g.c, g.d, g.t, g.r, g.s, *g.pad, *g.dilation,
        *g.stride, tiles_h, tiles_w,
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, TILE_W=tile_w, IMAGES=images,
        GROUP_M=cfg.get("GROUP_M", 8), ACT=call.activation, HAS_BIAS=call.bias is not None,
        HAS_RES=call.residual is not None, PREC=dot_precision(call), UPCAST=upcast_dot(call),
        DGRAD=call.transposed_w, STRIDED=strided, PROGRAMS=programs_cap,
        num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
    )


def box_conv_rejects(geom, plain_1x1: str, strided_ok: bool = False) -> str | None:
    """Why a tap's input pixels are not TMA boxes of a channels_last tensor (None: they
    are): ungrouped, channels_last, 16-byte channel rows, stride 1 (or, with
    ``strided_ok``, any stride whose taps are boxes of ``phase_view``: ``phase_rejects``).
    A stride-1 1x1 without padding is left to ``plain_1x1``, which reads it as dense
    matrices."""
    if geom.g != 1:
        return "grouped convolutions go to the grouped families"
    strided = geom.stride != (1, 1, 1)
    if geom.is_pointwise and geom.pad == (0, 0, 0) and not (strided and strided_ok):
        return f"1x1 without padding: {plain_1x1} reads it as dense matrices"
    if strided and not strided_ok:
        return "strided: a tap's input pixels are not one box"
    if strided and (reason := phase_rejects(geom)):
        return reason
    if geom.layout != "channels_last":
        return "TMA boxes need the channels innermost (channels_last)"
    return tma_rows_rejects(geom)


# (BLOCK_M, TILE_W, BLOCK_N, BLOCK_K, num_warps, num_stages): BLOCK_M pixels a tile,
# BLOCK_M / TILE_W rows of TILE_W (spread over images by box_images). TMA's 128-byte
# swizzle follows the shared-memory address, so a box of any width flattens into the
# [BLOCK_M, BLOCK_K] operand wgmma reads from shared memory (the sm_90 compile test).
# BLOCK_N is wgmma's M (the accumulator is [channels, pixels]): 64 a warpgroup.
TMA_CONV_TILES = (
    (64, 8, 64, 64, 4, 4), (64, 8, 128, 64, 4, 4), (64, 8, 256, 64, 8, 3),
    (128, 8, 128, 64, 8, 3), (128, 16, 64, 64, 4, 4), (128, 16, 128, 64, 4, 4),
    (128, 16, 128, 64, 8, 3), (128, 16, 128, 64, 8, 4), (128, 16, 256, 64, 8, 3),
    (128, 32, 128, 64, 8, 3), (256, 16, 128, 64, 8, 3), (256, 32, 128, 64, 8, 3),
    (64, 16, 128, 64, 4, 4), (128, 8, 64, 64, 4, 4), (128, 16, 128, 32, 4, 4),
    (64, 8, 128, 32, 4, 4), (128, 16, 128, 128, 8, 3), (128, 8, 128, 128, 8, 3),
    (128, 16, 128, 128, 4, 3), (128, 8, 256, 64, 8, 3), (128, 16, 128, 64, 4, 5),
    (128, 8, 128, 64, 4, 4), (64, 8, 128, 128, 4, 3),
)
# Narrow boxes (TILE_W < 8) for maps 7, 14 or 28 pixels wide, where every box of 8 or
# more columns reaches past the map: 1, 2 or 4 columns, the batch filling the box
# (ResNet-50 layer4 at batch 128: 128 images of one pixel a box, none wasted). The tile
# shapes are those that won most often among the wide boxes on batched problems.
NARROW_TILE_SHAPES = ((128, 128, 64, 4, 5), (256, 128, 64, 8, 3), (128, 64, 64, 4, 4),
                      (64, 128, 32, 4, 4), (128, 128, 64, 8, 3), (64, 128, 64, 4, 4),
                      (64, 128, 128, 4, 3), (128, 128, 128, 4, 3))
NARROW_TILE_W = (1, 2, 4)
# An 8-wide box; narrower ones must fill a larger share of their pixels than it does.
WIDE_BOX = 8


class ImplicitGemmTmaFamily(KernelFamily):
    name = "implicit_gemm_tma"
    summary = ("channels_last implicit GEMM: one TMA box of the input per (tap, channel "
               "block), zero fill as padding; phase boxes at a stride")
    configs = tuple(Config(BLOCK_M=bm, TILE_W=tw, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                           num_warps=wp, num_stages=st)
                    for bm, tw, bn, bk, wp, st in TMA_CONV_TILES + tuple(
                        (bm, tw, bn, bk, wp, st) for tw in NARROW_TILE_W
                        for bm, bn, bk, wp, st in NARROW_TILE_SHAPES))
    # The dgrad twin's: one-image boxes (its rows were measured with them), none narrow.
    dgrad_configs = tuple(c for c in configs if c["TILE_W"] >= WIDE_BOX)

    def supports(self, geom) -> str | None:
        if reason := box_conv_rejects(geom, "pointwise_tma", strided_ok=True):
            return reason
        if geom.c % 32:
            return f"C={geom.c} is not a multiple of 32 (the smallest BLOCK_K)"
        return None

    def smem_bytes(self, geom, cfg: Config) -> int:
        # Pipelined A and B tiles plus the output tile staged for the TMA store.
        return gemm_smem(geom, cfg) + cfg["BLOCK_M"] * cfg["BLOCK_N"] * geom.elem_bytes

    def hard_ok(self, geom, cfg: Config, device) -> str | None:
        if geom.c % cfg["BLOCK_K"]:
            return (f"BLOCK_K={cfg['BLOCK_K']} does not divide C={geom.c}: a filter box "
                    "would reach into the next tap")
        return (tma_missing(device) or phase_tiles_reject(geom, cfg)
                or super().hard_ok(geom, cfg, device))

    def config_ok(self, geom, cfg, device) -> str | None:
        _, oh, ow = geom.out_spatial
        tile_w = cfg["TILE_W"]
        if tile_w < WIDE_BOX and geom.d > 1 and geom.stride != (1, 1, 1):
            return "a narrow box fills up with images, and strided 3D boxes hold one"
        if tile_w < WIDE_BOX:
            use, wide = (box_use(geom, cfg["BLOCK_M"], tw) for tw in (tile_w, WIDE_BOX))
            if use <= wide + 0.01:
                return (f"a {tile_w}-pixel-wide box fills {use:.0%} of its pixels, "
                        f"an {WIDE_BOX}-wide one {wide:.0%}")
        elif (tile_w > max(8, next_pow2(ow))
              or cfg["BLOCK_M"] // tile_w > max(8, next_pow2(oh))):
            return (f"a {cfg['BLOCK_M'] // tile_w}x{tile_w} pixel tile exceeds the "
                    f"{oh}x{ow} output")
        if cfg["BLOCK_N"] > max(64, next_pow2(geom.k)):
            return f"BLOCK_N={cfg['BLOCK_N']} exceeds the {geom.k} output channels"
        if cfg["BLOCK_K"] > max(32, next_pow2(geom.c)):
            return f"BLOCK_K={cfg['BLOCK_K']} exceeds the {geom.c} input channels"
        return super().config_ok(geom, cfg, device)

    def launch(self, call: ConvCall, cfg: Config) -> None:
        launch_igemm_tma(call, cfg)


class ImplicitGemmTmaPersistentFamily(ImplicitGemmTmaFamily):
    """``implicit_gemm_tma``'s boxes, tiles and rules with a persistent grid: each SM's
    programs walk the tiles in grouped order, and the flattened loop loads the next tile's
    boxes while the last one is stored."""

    name = "implicit_gemm_tma_persistent"
    summary = ("stride-1 channels_last implicit GEMM with TMA boxes, persistent programs "
               "that overlap a tile's store with the next tile's loads")

    def launch(self, call: ConvCall, cfg: Config) -> None:
        launch_igemm_tma(call, cfg, persistent_cap(self.smem_bytes(call.geom, cfg), call, cfg))
