"""Implicit-GEMM convolution at stride 1 whose operands move by TMA boxes (Hopper).

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
    pixel_grid,
    tile_ids,
    upcast_dot,
)
from .implicit_gemm import gemm_smem, launch_igemm
from .launcher import launch_kernel
from .pointwise_tma import tma_missing, tma_rows_rejects

_RUNTIME_INTS = ["PIX_TILES", "OD", "KTOT", "C", "T", "R", "S", "pdd", "pdh", "pdw",
                 "dld", "dlh", "dlw", "TILES_H", "TILES_W"]


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def igemm_tma_kernel(
    x_desc, w_desc, y_desc, r_desc, bias_ptr,
    PIX_TILES, OD, KTOT, C, T, R, S, pdd, pdh, pdw, dld, dlh, dlw, TILES_H, TILES_W,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    TILE_W: tl.constexpr, GROUP_M: tl.constexpr, ACT: tl.constexpr,
    HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr, PREC: tl.constexpr,
    UPCAST: tl.constexpr, DGRAD: tl.constexpr,
):
    TILE_H: tl.constexpr = BLOCK_M // TILE_W
    pid_m, pid_n = tile_ids(tl.program_id(0), PIX_TILES, tl.cdiv(KTOT, BLOCK_N), GROUP_M)
    tw = pid_m % TILES_W
    rest = pid_m // TILES_W
    oh0 = (rest % TILES_H) * TILE_H
    rest = rest // TILES_H
    od = rest % OD
    n = rest // OD
    ow0 = tw * TILE_W
    off_n = pid_n * BLOCK_N
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
    if HAS_BIAS:
        offs_n = off_n + tl.arange(0, BLOCK_N)
        acc += tl.load(bias_ptr + offs_n, mask=offs_n < KTOT, other=0.0).to(tl.float32)[:, None]
    out = acc.T
    if HAS_RES:
        r = r_desc.load([n, od, oh0, ow0, off_n]).reshape(BLOCK_M, BLOCK_N)
        out += r.to(tl.float32)
    out = activate(out, ACT)
    out = out.to(y_desc.dtype).reshape(1, 1, TILE_H, TILE_W, BLOCK_N)
    y_desc.store([n, od, oh0, ow0, off_n], out)  # TMA clips past the image and K


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


def launch_igemm_tma(call: ConvCall, cfg: Config) -> None:
    g = call.geom
    bm, bn, bk, tile_w = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"], cfg["TILE_W"]
    tile_h = bm // tile_w
    if call.transposed_w != call.flip_taps and g.t * g.r * g.s > 1:
        raise RuntimeError("implicit_gemm_tma reads a transposed filter only with its taps "
                           "reversed (a dgrad call)")
    views = [pixels_view(call.x), filter_view(call.w), pixels_view(call.out)]
    if call.residual is not None:
        views.append(pixels_view(call.residual))
    bias_ok = call.bias is None or call.bias.data_ptr() % 16 == 0
    if any(v is None for v in views) or not bias_ok:
        launch_igemm(call, cfg)  # same tile, pointer loads: correct for any strides
        return
    x_box = [1, 1, tile_h, tile_w, bk]
    y_box = [1, 1, tile_h, tile_w, bn]
    w_box = [bk, bn] if call.transposed_w else [bn, bk]
    y_desc = descriptor(call.out, views[2], y_box)
    r_desc = descriptor(call.residual, views[3], y_box) if call.residual is not None else y_desc
    programs, tiles_h, tiles_w = pixel_grid(g, bm, tile_w)
    grid = (programs * cdiv(g.k, bn),)
    launch_kernel(igemm_tma_kernel, grid,
        descriptor(call.x, views[0], x_box), descriptor(call.w, views[1], w_box), y_desc,
        r_desc, call.bias if call.bias is not None else call.out,
        programs, g.out_spatial[0], g.k, g.c, g.t, g.r, g.s, *g.pad, *g.dilation,
        tiles_h, tiles_w,
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, TILE_W=tile_w, GROUP_M=cfg.get("GROUP_M", 8),
        ACT=call.activation, HAS_BIAS=call.bias is not None,
        HAS_RES=call.residual is not None, PREC=dot_precision(call), UPCAST=upcast_dot(call),
        DGRAD=call.transposed_w, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
    )


def box_conv_rejects(geom, plain_1x1: str) -> str | None:
    """Why a tap's input pixels are not TMA boxes of a channels_last tensor (None: they
    are): ungrouped, stride 1, channels_last, 16-byte channel rows. A 1x1 without padding
    is left to ``plain_1x1``, which reads it as dense matrices."""
    if geom.g != 1:
        return "grouped convolutions go to the grouped families"
    if geom.is_pointwise and geom.pad == (0, 0, 0):
        return f"1x1 without padding: {plain_1x1} reads it as dense matrices"
    if geom.stride != (1, 1, 1):
        return "strided: a tap's input pixels are not one box"
    if geom.layout != "channels_last":
        return "TMA boxes need the channels innermost (channels_last)"
    return tma_rows_rejects(geom)


# (BLOCK_M, TILE_W, BLOCK_N, BLOCK_K, num_warps, num_stages): BLOCK_M pixels a tile,
# BLOCK_M / TILE_W rows of TILE_W. TILE_W is a multiple of 8 so that the box's rows keep
# the 128-byte swizzle when the [TILE_H, TILE_W] pixels are read as one GEMM dim.
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


class ImplicitGemmTmaFamily(KernelFamily):
    name = "implicit_gemm_tma"
    summary = ("stride-1 channels_last implicit GEMM: one TMA box of the input per "
               "(tap, channel block), zero fill as padding")
    configs = tuple(Config(BLOCK_M=bm, TILE_W=tw, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                           num_warps=wp, num_stages=st)
                    for bm, tw, bn, bk, wp, st in TMA_CONV_TILES)

    def supports(self, geom) -> str | None:
        if reason := box_conv_rejects(geom, "pointwise_tma"):
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
        return tma_missing(device) or super().hard_ok(geom, cfg, device)

    def config_ok(self, geom, cfg, device) -> str | None:
        _, oh, ow = geom.out_spatial
        tile_w = cfg["TILE_W"]
        if tile_w > max(8, next_pow2(ow)) or cfg["BLOCK_M"] // tile_w > max(8, next_pow2(oh)):
            return (f"a {cfg['BLOCK_M'] // tile_w}x{tile_w} pixel tile exceeds the "
                    f"{oh}x{ow} output")
        if cfg["BLOCK_N"] > max(64, next_pow2(geom.k)):
            return f"BLOCK_N={cfg['BLOCK_N']} exceeds the {geom.k} output channels"
        if cfg["BLOCK_K"] > max(32, next_pow2(geom.c)):
            return f"BLOCK_K={cfg['BLOCK_K']} exceeds the {geom.c} input channels"
        return super().config_ok(geom, cfg, device)

    def launch(self, call: ConvCall, cfg: Config) -> None:
        launch_igemm_tma(call, cfg)
