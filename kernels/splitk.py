"""Split-K implicit GEMM for small-M layers (batch 1, 7x7 maps, deep channels).

Too few output tiles leave most SMs idle; splitting the reduction gives each
SM a slice. Partial sums land in a float32 workspace and a second kernel adds
them in a fixed order, then applies the epilogue: deterministic, no atomics.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import Config, ConvCall, KernelFamily, next_pow2, prev_pow2
from .common import REDUCE_PROGRAMS, cdiv, needs_int64, out_args, split_rows, store_tile
from .dependent import dependent_args, wait_for_prior
from .implicit_gemm import gemm_smem, k_iters, launch_igemm, make_configs, tiles_fit
from .launcher import launch_kernel, workspace


@triton.jit(do_not_specialize=["M", "OD", "OH", "OW"])
def splitk_reduce_kernel(
    ws_ptr, out_ptr, syn, syc, syd, syh, syw,
    bias_ptr, res_ptr, srn, src, srd, srh, srw,
    M, KTOT, OD, OH, OW,
    SPLIT_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    ACT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr, INT64: tl.constexpr,
    PRIOR: tl.constexpr,
):
    wait_for_prior(PRIOR)  # launched as the dependent of the kernel that wrote ws
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = offs_m < M
    k_mask = offs_k < KTOT
    mask = m_mask[:, None] & k_mask[None, :]
    base = offs_m.to(tl.int64)[:, None] * KTOT + offs_k[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for i in tl.static_range(SPLIT_K):
        acc += tl.load(ws_ptr + base + i * M * KTOT, mask=mask, other=0.0)
    n, od, oh, ow = split_rows(offs_m, OD, OH, OW)
    store_tile(acc, n, od, oh, ow, m_mask, offs_k, k_mask,
               out_ptr, syn, syc, syd, syh, syw, bias_ptr, res_ptr, srn, src, srd, srh, srw,
               HAS_BIAS, HAS_RES, ACT, INT64)


def reduce_block(m: int, k: int) -> tuple[int, int, int]:
    """(BLOCK_M, BLOCK_N, num_warps) of the reduce pass over an M x K output: a block of
    up to 64 channels (fewer where K is smaller) and as many rows as leave about
    ``REDUCE_PROGRAMS`` programs, at most 64. Its first tiling, 64 x 64 outputs a program,
    left 16 programs on a 196 x 256 output and took 4-12 us of 14-49 us layers (ResNet-50
    layer3 at batch 1, SD-VAE; validation/results/narrow_boxes_h100/)."""
    bn = min(64, next_pow2(k))
    bm = min(64, prev_pow2(max(m * k // (REDUCE_PROGRAMS * bn), 1)))
    return bm, bn, max(1, min(4, bm * bn // 256))


def split_rejects(tiles: int, steps: int, split: int, device, min_run: int = 2) -> str | None:
    """Why splitting ``steps`` reduction steps of ``tiles`` output tiles (programs) into
    ``split`` runs does not pay (None: it may): runs shorter than ``min_run`` steps, or
    tiles enough for two waves already."""
    if steps < min_run * split:
        return f"{steps} reduction steps are too few for SPLIT_K={split}"
    if tiles >= 2 * max(device.sm_count, 1):
        return f"{tiles} output tiles already fill {device.sm_count} SMs twice"
    return None


SPLITK_TILES = ((32, 32, 64, 4, 3), (64, 32, 64, 4, 3), (32, 64, 64, 4, 3), (64, 64, 64, 4, 3),
                (64, 128, 64, 4, 3), (128, 64, 64, 4, 3), (64, 64, 32, 4, 4))
SPLITS = (2, 4, 8, 16)


class SplitKFamily(KernelFamily):
    name = "splitk"
    summary = "implicit GEMM with the reduction split over programs, deterministic reduce pass"
    always_offer = False
    configs = tuple(c for s in SPLITS for c in make_configs(SPLITK_TILES, GROUP_M=8, SPLIT_K=s))

    def supports(self, geom) -> str | None:
        if geom.cg < 16:
            return f"{geom.cg} input channels per group: nothing worth splitting"
        return None

    def smem_bytes(self, geom, cfg: Config) -> int:
        return gemm_smem(geom, cfg)

    def config_ok(self, geom, cfg, device) -> str | None:
        why = tiles_fit(geom, cfg)
        if why:
            return why
        iters = geom.t * geom.r * geom.s * cdiv(geom.cg, cfg["BLOCK_K"])
        tiles = (cdiv(geom.gemm_m, cfg["BLOCK_M"]) * cdiv(geom.kg, cfg["BLOCK_N"])
                 * geom.g)
        return (split_rejects(tiles, iters, cfg["SPLIT_K"], device)
                or super().config_ok(geom, cfg, device))

    def launch(self, call: ConvCall, cfg: Config) -> None:
        g = call.geom
        split = cfg["SPLIT_K"]
        ws = workspace((split, g.gemm_m, g.k), call.x.device)
        launch_igemm(call, cfg, workspace=ws)
        launch_split_reduce(call, ws, split)


def launch_split_reduce(call: ConvCall, ws, split: int) -> None:
    """The reduce pass: the [split, M, K] float32 partial sums of ``ws`` added in split
    order (deterministic), then bias, residual and activation into ``call.out``."""
    g = call.geom
    bm, bn, warps = reduce_block(g.gemm_m, g.k)
    launch_kernel(splitk_reduce_kernel, (cdiv(g.gemm_m, bm), cdiv(g.k, bn)),
        ws, *out_args(call), g.gemm_m, g.k, *g.out_spatial,
        SPLIT_K=split, BLOCK_M=bm, BLOCK_N=bn, ACT=call.activation,
        HAS_BIAS=call.bias is not None, HAS_RES=call.residual is not None,
        INT64=needs_int64(call), num_warps=warps, **dependent_args(call.out.device),
    )


__all__ = ["SplitKFamily", "k_iters", "launch_split_reduce", "split_rejects"]
