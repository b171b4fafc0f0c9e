"""Gradient of a 1x1 stride-1 filter as a GEMM whose operands move by TMA (Hopper).

For a channels_last 1x1 conv without padding or stride, dY is a dense [M, K] and X
a dense [M, C] matrix (M = N*D*H*W pixels), and dW[K, C] = dY^T X: a GEMM reduced
over the pixels. The tensor-memory accelerator loads a [BLOCK_K pixels, BLOCK_M]
box of dY and a [BLOCK_K, BLOCK_N] box of X per step (zero fill past M), with no
per-pixel index arithmetic (``wgrad_gemm`` splits every pixel index into n, d, h,
w each step). The pixels are split over SPLIT_K programs as in ``wgrad_gemm``:
float32 slices added in a fixed order (``reduce_splits``), no atomics.

Where a tensor breaks TMA's rules at run time (an unaligned view) the same tile
runs through ``wgrad_gemm``'s pointer kernel; launches holding descriptors are not
replayed by the fast path (``launcher.Plan`` refuses them).
"""

from __future__ import annotations

import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from .base import Config, GradCall
from .common import dot_precision, strides5, tile_ids, upcast_dot
from .geometry import DTYPES
from .grad_common import GradFamily, GradGrid
from .implicit_gemm import gemm_smem, make_configs
from .launcher import launch_kernel
from .pointwise_tma import dense_rows_rejects, rows_view, tma_missing
from .wgrad_gemm import (
    WGRAD_SPLITS,
    launch_wgrad,
    split_ok,
    split_slices,
    wgrad_grid,
)


@triton.jit(do_not_specialize=["ITERS_PER_SPLIT"])
def wgrad_tma_kernel(
    dy_desc, x_desc, dw_ptr, ws_ptr, KTOT, CTOT, ITERS_PER_SPLIT, swk, swc,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr, PREC: tl.constexpr, UPCAST: tl.constexpr,
):
    pid_m, pid_n = tile_ids(tl.program_id(0), tl.cdiv(KTOT, BLOCK_M), tl.cdiv(CTOT, BLOCK_N),
                            GROUP_M)
    pid_k = tl.program_id(1)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    p0 = pid_k * ITERS_PER_SPLIT * BLOCK_K
    for _ in range(0, ITERS_PER_SPLIT):
        a = dy_desc.load([p0, off_m])  # [pixels, output channels]; zeros past M
        b = x_desc.load([p0, off_n])  # [pixels, input channels]
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a.T, b, acc, input_precision=PREC)
        p0 += BLOCK_K
    offs_m = off_m + tl.arange(0, BLOCK_M)
    offs_n = off_n + tl.arange(0, BLOCK_N)
    mask = (offs_m < KTOT)[:, None] & (offs_n < CTOT)[None, :]
    if SPLIT_K == 1:
        w_off = (offs_m * swk)[:, None] + (offs_n * swc)[None, :]
        tl.store(dw_ptr + w_off, acc.to(dw_ptr.dtype.element_ty), mask=mask)
    else:
        # Workspace [SPLIT_K, K, C] (the [SPLIT_K, taps, K, C/G] of reduce_splits, 1 tap).
        ws_off = pid_k.to(tl.int64) * KTOT * CTOT + (offs_m * CTOT)[:, None] + offs_n[None, :]
        tl.store(ws_ptr + ws_off, acc, mask=mask)


def launch_wgrad_tma(call: GradCall, cfg: Config) -> None:
    g = call.geom
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    dy2 = rows_view(call.dy, g.k)
    x2 = rows_view(call.x, g.c)
    if dy2 is None or x2 is None:
        launch_wgrad(call, cfg)  # same tile, pointer loads: correct for any strides
        return
    split = cfg.get("SPLIT_K", 1)
    tiles = wgrad_grid(g, cfg)
    sw = strides5(call.out)
    with split_slices(call, split, tiles.k_steps) as (per_split, ws, slices):
        launch_kernel(wgrad_tma_kernel, (tiles.tiles_m * tiles.tiles_n, slices),
            TensorDescriptor.from_tensor(dy2, [bk, bm]),
            TensorDescriptor.from_tensor(x2, [bk, bn]),
            call.out, ws, g.k, g.c, per_split, sw[0], sw[1],
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=cfg.get("GROUP_M", 4), SPLIT_K=split,
            PREC=dot_precision(call), UPCAST=upcast_dot(call),
            num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
        )


# (BLOCK_M over output channels, BLOCK_N over input channels, BLOCK_K over pixels,
# num_warps, num_stages): TMA boxes are at most 256 a side.
WGRAD_TMA_TILES = (
    (64, 64, 64, 4, 4), (64, 128, 64, 4, 4), (128, 64, 64, 4, 4), (128, 128, 64, 8, 3),
    (128, 128, 128, 8, 3), (128, 256, 64, 8, 3),
)


class WgradTmaFamily(GradFamily):
    """What the TMA wgrad families share: Hopper only, pipelined dY and X tiles, channel
    tiles pruned past twice the channels, ``wgrad_gemm``'s split pruning on the family's
    own grid."""

    direction = "wgrad"
    dtypes = DTYPES

    def smem_bytes(self, geom, cfg: Config) -> int:
        return gemm_smem(geom, cfg)

    def hard_ok(self, geom, cfg: Config, device) -> str | None:
        return tma_missing(device) or super().hard_ok(geom, cfg, device)

    def config_ok(self, geom, cfg, device) -> str | None:
        for key, extent, what in (("BLOCK_M", geom.k, "output"), ("BLOCK_N", geom.c, "input")):
            if cfg[key] > max(64, 2 * extent):
                return f"{key}={cfg[key]} exceeds the {extent} {what} channels"
        return (split_ok(geom, cfg, device, self.grid(geom, cfg))
                or super().config_ok(geom, cfg, device))


class WgradPointwiseTmaFamily(WgradTmaFamily):
    name = "wgrad_pointwise_tma"
    summary = ("gradient of a 1x1 stride-1 channels_last filter: dY^T X with TMA tiles, "
               "split over pixels with a fixed-order reduction")
    configs = tuple(c for s in WGRAD_SPLITS  # wgrad_gemm's splits
                    for c in make_configs(WGRAD_TMA_TILES, GROUP_M=4, SPLIT_K=s))

    def supports(self, geom) -> str | None:
        return dense_rows_rejects(geom)

    def grid(self, geom, cfg: Config) -> GradGrid:
        return wgrad_grid(geom, cfg)

    def launch(self, call: GradCall, cfg: Config) -> None:
        launch_wgrad_tma(call, cfg)
