"""1x1 stride-1 convolution as a GEMM whose operands move by TMA (Hopper).

A channels_last input with stride 1 is a dense [M, C] matrix (M = N*D*H*W), the
1x1 filter a dense [K, C] one and the output a dense [M, K] one, so every tile is
a box of a 2D tensor: the tensor-memory accelerator loads the A and B tiles and
stores the output tile (host-built descriptors, zero fill past each edge), with no
per-row address or mask arithmetic in the loop. Bias, residual and activation are
applied to the accumulator before the store.

Where a tensor breaks TMA's rules at run time (a base address or row pitch that is
not 16-byte aligned, e.g. a view with an odd storage offset), the same tile runs
through the pointer-based ``pointwise`` kernel instead. The descriptors hold tensor
addresses, so the dispatcher's fast path does not replay these launches with other
tensors (``launcher.Plan`` refuses them): each eager call builds its descriptors, host
time that a CUDA graph removes.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from .base import Config, ConvCall, KernelFamily
from .common import (
    activate,
    cdiv,
    dot_precision,
    persistent_cap,
    persistent_grid,
    tile_ids,
    upcast_dot,
)
from .implicit_gemm import gemm_smem, make_configs, tiles_fit
from .launcher import launch_kernel
from .pointwise import launch_pointwise


@triton.jit
def gemm_epilogue(acc, c_desc, r_desc, bias_ptr, off_m, off_n, KTOT, BLOCK_N: tl.constexpr,
                  ACT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr):
    """Bias, residual and activation on a [BLOCK_M, BLOCK_N] tile, then its TMA store."""
    if HAS_BIAS:
        offs_n = off_n + tl.arange(0, BLOCK_N)
        acc += tl.load(bias_ptr + offs_n, mask=offs_n < KTOT, other=0.0).to(tl.float32)[None, :]
    if HAS_RES:
        acc += r_desc.load([off_m, off_n]).to(tl.float32)
    acc = activate(acc, ACT)
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))  # TMA clips past M and K


@triton.jit
def gemm_tile(a_desc, b_desc, off_m, off_n, C, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              BLOCK_K: tl.constexpr, PREC: tl.constexpr, UPCAST: tl.constexpr,
              B_ROWS_K: tl.constexpr):
    """One output tile's [BLOCK_M, BLOCK_N] float32 product over all C channels."""
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for c0 in range(0, C, BLOCK_K):
        a = a_desc.load([off_m, c0])  # TMA fills past C (and M) with zeros
        if B_ROWS_K:  # filter stored [C, K]: a box of it is already the [BK, BN] operand
            b = b_desc.load([c0, off_n])
        else:
            b = b_desc.load([off_n, c0]).T
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PREC)
    return acc


@triton.jit(do_not_specialize=["M"])
def pointwise_tma_kernel(
    a_desc, b_desc, c_desc, r_desc, bias_ptr, M, C, KTOT,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, ACT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr,
    PREC: tl.constexpr, UPCAST: tl.constexpr, B_ROWS_K: tl.constexpr, PROGRAMS: tl.constexpr,
):
    """One output tile a program (PROGRAMS = 0), or a persistent grid of PROGRAMS programs
    walking the tiles in grouped order."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(KTOT, BLOCK_N)
    if PROGRAMS == 0:
        pid_m, pid_n = tile_ids(tl.program_id(0), tiles_m, tiles_n, GROUP_M)
        acc = gemm_tile(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, C, BLOCK_M, BLOCK_N,
                        BLOCK_K, PREC, UPCAST, B_ROWS_K)
        gemm_epilogue(acc, c_desc, r_desc, bias_ptr, pid_m * BLOCK_M, pid_n * BLOCK_N, KTOT,
                      BLOCK_N, ACT, HAS_BIAS, HAS_RES)
    else:
        start = tl.program_id(0)
        tile_c = start - PROGRAMS  # the epilogue's own counter (igemm_tma_kernel says why)
        for tile in tl.range(start, tiles_m * tiles_n, PROGRAMS, flatten=True):
            pid_m, pid_n = tile_ids(tile, tiles_m, tiles_n, GROUP_M)
            acc = gemm_tile(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, C, BLOCK_M,
                            BLOCK_N, BLOCK_K, PREC, UPCAST, B_ROWS_K)
            tile_c += PROGRAMS
            pid_m, pid_n = tile_ids(tile_c, tiles_m, tiles_n, GROUP_M)
            gemm_epilogue(acc, c_desc, r_desc, bias_ptr, pid_m * BLOCK_M, pid_n * BLOCK_N,
                          KTOT, BLOCK_N, ACT, HAS_BIAS, HAS_RES)


def dense_rows_rejects(geom) -> str | None:
    """Why the pixels x channels matrices of a 1x1 conv are not TMA boxes (None: they are):
    ungrouped, stride 1, channels_last, 16-byte rows."""
    if not geom.is_pointwise or geom.g != 1:
        return "not an ungrouped 1x1 convolution"
    if geom.stride != (1, 1, 1):
        return "strided 1x1: the input rows are not one dense matrix"
    if geom.layout != "channels_last":
        return "TMA reads the input as a dense [pixels, channels] matrix (channels_last)"
    return tma_rows_rejects(geom)


def tma_rows_rejects(geom) -> str | None:
    """Why the channel rows of X or Y are not 16-byte multiples, as TMA needs (None: they
    are)."""
    if geom.c * geom.elem_bytes % 16 or geom.k * geom.elem_bytes % 16:
        return (f"TMA needs 16-byte rows: C={geom.c} and K={geom.k} channels of "
                f"{geom.elem_bytes} bytes")
    return None


def tma_missing(device) -> str | None:
    """Why ``device`` cannot run TMA kernels (None: it can)."""
    if device.has_tma:
        return None
    return (f"TMA needs compute capability 9.0 or newer ({device.name} has "
            f"{device.capability[0]}.{device.capability[1]})")


def rows_view(t: torch.Tensor, cols: int) -> torch.Tensor | None:
    """``t`` (N, C, D, H, W in channels_last_3d order) as a dense [rows, cols] matrix
    sharing its memory, or None when it is not one or breaks TMA's 16-byte rules."""
    if t.data_ptr() % 16 or cols * t.element_size() % 16:
        return None
    n, _, d, h, w = t.shape
    want = (d * h * w * cols, 1, h * w * cols, w * cols, cols)
    if any(s != ws for s, ws, size in zip(t.stride(), want, t.shape) if size > 1):
        return None
    return t.as_strided((n * d * h * w, cols), (cols, 1))


def launch_pointwise_tma(call: ConvCall, cfg: Config, programs_cap: int = 0) -> None:
    """One program a tile, or with ``programs_cap`` a persistent grid of at most that many
    programs walking the tiles."""
    g = call.geom
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    x2 = rows_view(call.x, g.c)
    # A transposed_w call (dgrad) reads the stored [C, K] filter as its rows: out channel
    # = stored input channel, so the [K rows, C cols] matrix of the stored filter is used.
    w2 = rows_view(call.w, g.k if call.transposed_w else g.c)
    y2 = rows_view(call.out, g.k)
    r2 = rows_view(call.residual, g.k) if call.residual is not None else None
    bias_ok = call.bias is None or call.bias.data_ptr() % 16 == 0
    if x2 is None or w2 is None or y2 is None or not bias_ok or (
            call.residual is not None and r2 is None):
        launch_pointwise(call, cfg)  # same tile, pointer loads: correct for any strides
        return
    a_desc = TensorDescriptor.from_tensor(x2, [bm, bk])
    b_desc = TensorDescriptor.from_tensor(w2, [bk, bn] if call.transposed_w else [bn, bk])
    c_desc = TensorDescriptor.from_tensor(y2, [bm, bn])
    r_desc = TensorDescriptor.from_tensor(r2, [bm, bn]) if r2 is not None else c_desc
    tiles = cdiv(g.gemm_m, bm) * cdiv(g.k, bn)
    launch_kernel(pointwise_tma_kernel, persistent_grid(tiles, programs_cap),
        a_desc, b_desc, c_desc, r_desc, call.bias if call.bias is not None else call.out,
        g.gemm_m, g.c, g.k,
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=cfg.get("GROUP_M", 8),
        ACT=call.activation, HAS_BIAS=call.bias is not None,
        HAS_RES=call.residual is not None, PREC=dot_precision(call), UPCAST=upcast_dot(call),
        B_ROWS_K=call.transposed_w, PROGRAMS=programs_cap, num_warps=cfg["num_warps"],
        num_stages=cfg["num_stages"],
    )


# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages): TMA boxes are at most 256 a side;
# Hopper's larger tiles and deeper pipelines pay once loads cost no registers.
TMA_TILES = (
    (64, 64, 64, 4, 4), (64, 128, 64, 4, 4), (128, 64, 64, 4, 4), (128, 64, 64, 4, 5),
    (128, 128, 64, 4, 3), (128, 128, 64, 4, 4), (128, 128, 64, 8, 3), (128, 128, 64, 8, 4),
    (128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 128, 8, 3), (64, 256, 64, 4, 4),
)
# Tiles 32 channels wide on one side, for layers with 32 channels or fewer there
# (``narrow_tile_rejects``): MobileNetV2's 1x1s of 144 -> 24 and 24 -> 144 channels at
# batch 32 ran at 0.72-0.74x cuDNN on 64-wide tiles, where cuDNN's GEMM kernels use tiles
# 24 and 144 channels wide by 384 and 256 pixels, one wave of 132 programs with 225 KB of
# shared memory each (Nsight Compute, validation/results/resnext101_data_h100/call92/).
NARROW_TILES = (
    (256, 32, 64, 4, 4), (128, 32, 64, 4, 4), (128, 128, 32, 4, 4), (64, 256, 32, 4, 4),
    (128, 256, 32, 8, 3), (256, 128, 32, 8, 4),
)


def narrow_tile_rejects(geom, cfg: Config) -> str | None:
    """Why a tile 32 channels wide is not offered: where that side has more than 32
    channels, a 64-wide tile does the same work in half the steps."""
    for side, block, channels in (("output", cfg["BLOCK_N"], geom.kg),
                                  ("input", cfg["BLOCK_K"], geom.cg)):
        if block < 64 and channels > block:
            return (f"a {block}-channel tile is for {block} {side} channels or fewer, "
                    f"not {channels}")
    return None


class PointwiseTmaFamily(KernelFamily):
    name = "pointwise_tma"
    summary = "1x1 stride-1 channels_last convolution as a GEMM with TMA loads and stores"
    configs = make_configs(TMA_TILES + NARROW_TILES, GROUP_M=8)

    def supports(self, geom) -> str | None:
        return dense_rows_rejects(geom)

    def smem_bytes(self, geom, cfg: Config) -> int:
        # Pipelined A and B tiles plus the output tile staged for the TMA store.
        return gemm_smem(geom, cfg) + cfg["BLOCK_M"] * cfg["BLOCK_N"] * geom.elem_bytes

    def hard_ok(self, geom, cfg: Config, device) -> str | None:
        return tma_missing(device) or super().hard_ok(geom, cfg, device)

    def config_ok(self, geom, cfg, device) -> str | None:
        return (tiles_fit(geom, cfg) or narrow_tile_rejects(geom, cfg)
                or super().config_ok(geom, cfg, device))

    def launch(self, call: ConvCall, cfg: Config) -> None:
        launch_pointwise_tma(call, cfg)


class PointwiseTmaPersistentFamily(PointwiseTmaFamily):
    """``pointwise_tma``'s tiles and rules with a persistent grid: each SM's programs walk
    the tiles in grouped order, and the flattened loop loads the next tile while the
    last one is stored, which pays where the channel loop is a few steps long."""

    name = "pointwise_tma_persistent"
    summary = ("1x1 stride-1 channels_last GEMM with TMA, persistent programs that overlap "
               "a tile's store with the next tile's loads")

    def launch(self, call: ConvCall, cfg: Config) -> None:
        launch_pointwise_tma(call, cfg, persistent_cap(self.smem_bytes(call.geom, cfg), call, cfg))
