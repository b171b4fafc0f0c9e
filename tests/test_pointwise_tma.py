"""pointwise_tma: 1x1 stride-1 channels_last convolutions through TMA descriptors
(interpreter on the CPU; the H100 runs under -m gpu)."""

from __future__ import annotations

import dataclasses
import functools

import pytest
import torch
from convdispatch.dispatcher import registry
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.device import INTERPRETER, lookup
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.kernels.pointwise_tma import rows_view
from helpers import (
    check_candidate,
    check_candidates_on_gpu,
    compile_for_sm90,
    tensors_for,
    unaligned,
)

G = functools.partial(ConvGeometry, r=1, s=1)
FAMILY = registry.family("pointwise_tma")
CFG = Config(BLOCK_M=64, BLOCK_N=64, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=4)


BOTH = ["pointwise_tma", "pointwise_tma_persistent"]


def check(geom: ConvGeometry, config: Config = CFG, family: str = "pointwise_tma",
          **kw) -> None:
    check_candidate(family, geom, config, **kw)


@pytest.mark.parametrize("family", BOTH)
@pytest.mark.parametrize("geom", [
    G(n=2, c=48, k=40, h=5, w=7, dtype="float32"),  # M, N and C tails in every tile
    G(n=1, c=136, k=72, h=4, w=4, dtype="float16"),  # C past one BLOCK_K, K tail
    G(n=2, c=32, k=16, d=2, h=3, w=3, t=1, dims=3, dtype="bfloat16"),
], ids=lambda g: g.describe())
def test_matches_torch(geom, family):
    check(geom, family=family)


NARROW_N = Config(BLOCK_M=128, BLOCK_N=32, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=4)
NARROW_K = Config(BLOCK_M=64, BLOCK_N=256, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=4)


@pytest.mark.parametrize("family", BOTH)
@pytest.mark.parametrize("geom,config", [
    (G(n=2, c=80, k=24, h=5, w=7, dtype="float16"), NARROW_N),  # 24 of 32 columns
    (G(n=1, c=24, k=144, h=6, w=6, dtype="float32"), NARROW_K),  # 24 of 32 channels
], ids=["narrow_n", "narrow_k"])
def test_narrow_tiles_match_torch(geom, config, family):
    check(geom, config, family=family, with_residual=True, activation="relu")


def test_narrow_tiles_only_for_few_channels():
    h100 = lookup("h100")
    few_out, few_in = G(n=32, c=144, k=24, h=56, w=56), G(n=32, c=24, k=144, h=56, w=56)
    assert FAMILY.feasible(few_out, NARROW_N, h100) is None
    assert FAMILY.feasible(few_in, NARROW_K, h100) is None
    assert "for 32 output channels or fewer, not 40" in FAMILY.feasible(
        dataclasses.replace(few_out, k=40), NARROW_N, h100)
    assert "for 32 input channels or fewer, not 48" in FAMILY.feasible(
        dataclasses.replace(few_in, c=48), NARROW_K, h100)
    # Where both sides are wide, only the 64-wide tiles are offered.
    wide = [c.config for c in registry.candidates(G(n=8, c=256, k=256, h=28, w=28), h100)
            if c.family == "pointwise_tma"]
    assert wide and all(c["BLOCK_N"] >= 64 and c["BLOCK_K"] >= 64 for c in wide)


@pytest.mark.parametrize("family", BOTH)
@pytest.mark.parametrize("activation", ["relu", "gelu", "silu"])
def test_bias_residual_activation(activation, family):
    check(G(n=1, c=64, k=48, h=6, w=5, dtype="float32"), activation=activation,
          with_residual=True, family=family)


def test_persistent_programs_walk_several_tiles():
    """The persistent grid holds fewer programs than tiles (the interpreter's 4 SMs against
    3 x 2 tiles), and the result is the one-program-a-tile kernel's, bit for bit."""
    from convdispatch.dispatcher import run_candidate
    from convdispatch.kernels.launcher import Recorder
    from helpers import poisoned_out

    geom = G(n=2, c=96, k=80, h=8, w=10, dtype="float32")
    x, w, b = tensors_for(geom)
    outs, grids = [], []
    for family in BOTH:
        outs.append(poisoned_out(geom, x))
        with Recorder() as rec:
            run_candidate(Candidate(family, CFG), x, w, b, geom, out=outs[-1])
        grids.append(rec.steps[-1].grid)
    assert grids == [(6,), (INTERPRETER.sm_count,)]
    assert torch.equal(outs[0], outs[1])


def test_persistent_programs():
    """One or two programs an SM by shared memory; 0 (the one-tile kernel) where a fused
    residual's tile does not fit beside the pipeline. Sizes: sm_90 compiles of
    pointwise_tma_kernel on a persistent grid, fp16 (256x128x64 tile, 3 stages: 213016
    bytes; with a residual 278568, past the H100's 232448)."""
    from convdispatch.kernels.common import persistent_programs

    h100 = lookup("h100")
    big = FAMILY.smem_bytes(G(n=1, c=64, k=64, h=8, w=8),
                            Config(BLOCK_M=256, BLOCK_N=128, BLOCK_K=64, GROUP_M=8,
                                   num_warps=8, num_stages=3))
    assert big == 212992
    assert persistent_programs(big, h100) == 132
    assert persistent_programs(big, h100, residual_bytes=256 * 128 * 2) == 0
    assert persistent_programs(73760, h100) == 264
    assert persistent_programs(73760, INTERPRETER) == INTERPRETER.sm_count


def test_misaligned_input_runs_through_the_pointer_kernel():
    """A view whose address is not 16-byte aligned cannot be a TMA base: same tile, plain
    loads, same result."""
    geom = G(n=1, c=32, k=32, h=4, w=4, dtype="float16")
    x, _, _ = tensors_for(geom)
    shifted = unaligned(x)
    assert rows_view(shifted[:, :, None], geom.c) is None
    check(geom, x=shifted)


def test_feasibility():
    h100, a100 = lookup("h100"), lookup("a100")
    geom = G(n=32, c=256, k=64, h=56, w=56)
    assert FAMILY.feasible(geom, CFG, h100) is None
    assert FAMILY.feasible(geom, CFG, INTERPRETER) is None
    assert "capability 9.0" in FAMILY.feasible(geom, CFG, a100)
    assert "strided" in FAMILY.supports(G(n=1, c=64, k=64, h=8, w=8, stride=(1, 2, 2)))
    assert "channels_last" in FAMILY.supports(G(n=1, c=64, k=64, h=8, w=8,
                                                layout="contiguous"))
    assert "16-byte rows" in FAMILY.supports(G(n=1, c=36, k=64, h=8, w=8))  # 72 bytes
    assert FAMILY.supports(G(n=1, c=36, k=64, h=8, w=8, dtype="float32")) is None
    assert "not an ungrouped 1x1" in FAMILY.supports(ConvGeometry(n=1, c=64, k=64, h=8, w=8,
                                                                  r=3, s=3, pad=(0, 1, 1)))
    assert "not an ungrouped 1x1" in FAMILY.supports(G(n=1, c=64, k=64, h=8, w=8, g=2))
    big = Config(BLOCK_M=256, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3)
    assert FAMILY.smem_bytes(geom, big) == 3 * (256 + 128) * 64 * 2 + 256 * 128 * 2
    assert "shared memory" in FAMILY.runnable(dataclasses.replace(geom, dtype="float32"),
                                              big, h100)


_TILE = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)
# (module, kernel, constexprs, TMA boxes, the TMA directions the PTX must hold)
_KERNELS = {
    "forward": ("convdispatch.kernels.pointwise_tma", "pointwise_tma_kernel",
                dict(_TILE, GROUP_M=8, ACT=1, HAS_BIAS=True, HAS_RES=True, PREC="ieee",
                     UPCAST=False, B_ROWS_K=False, PROGRAMS=0),
                {"a_desc": (128, 64), "b_desc": (128, 64), "c_desc": (128, 128),
                 "r_desc": (128, 128)}, ["2d.global", "2d.shared"]),
    "persistent": ("convdispatch.kernels.pointwise_tma", "pointwise_tma_kernel",
                   dict(_TILE, GROUP_M=8, ACT=1, HAS_BIAS=True, HAS_RES=True, PREC="ieee",
                        UPCAST=False, B_ROWS_K=False, PROGRAMS=132),
                   {"a_desc": (128, 64), "b_desc": (128, 64), "c_desc": (128, 128),
                    "r_desc": (128, 128)}, ["2d.global", "2d.shared"]),
    "dgrad": ("convdispatch.kernels.pointwise_tma", "pointwise_tma_kernel",
              dict(_TILE, GROUP_M=8, ACT=0, HAS_BIAS=False, HAS_RES=False, PREC="ieee",
                   UPCAST=False, B_ROWS_K=True, PROGRAMS=0),
              {"a_desc": (128, 64), "b_desc": (64, 128), "c_desc": (128, 128),
               "r_desc": (128, 128)}, ["2d.global", "2d.shared"]),
    "wgrad": ("convdispatch.kernels.wgrad_pointwise_tma", "wgrad_tma_kernel",
              dict(_TILE, GROUP_M=4, SPLIT_K=4, PREC="ieee", UPCAST=False),
              {"dy_desc": (64, 128), "x_desc": (64, 128)}, ["2d.shared"]),
}


@pytest.mark.parametrize("case", sorted(_KERNELS))
def test_compiles_to_tma_copies_and_wgmma_for_sm90(case):
    """Compiled for sm_90 in a process without the interpreter (no GPU needed): the tiles
    move by TMA (global->shared loads; shared->global stores where the output is a TMA
    box) and feed wgmma. dgrad: the filter read as stored, [C, K] boxes; wgrad: dY^T X."""
    module, kernel, const, box, tma = _KERNELS[case]
    got = compile_for_sm90(module, kernel, const, box)
    assert got == {"tma": tma, "wgmma": True, "smem_operands": True}


# --- on a GPU (CONVDISPATCH_GPU_TESTS=1 ... -m gpu through the device tool) --------------------
GPU_CASES = [
    G(n=32, c=256, k=64, h=56, w=56),  # ResNet-50 layer1.1.conv1
    G(n=32, c=128, k=512, h=28, w=28),  # layer2.0.conv3
    G(n=8, c=2048, k=512, h=7, w=7),
    G(n=3, c=72, k=200, h=17, w=13),  # tails everywhere
    G(n=2, c=64, k=64, d=4, h=14, w=14, t=1, dims=3),
    G(n=32, c=144, k=24, h=56, w=56),  # MobileNetV2 features.3.conv.2: the 32-wide N tiles
    G(n=32, c=24, k=144, h=56, w=56),  # features.3.conv.0.0: the 32-wide K tiles
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,tol", [("float16", 1e-2), ("bfloat16", 3e-2), ("float32", 1e-2)])
@pytest.mark.parametrize("base", GPU_CASES, ids=lambda g: g.describe())
@pytest.mark.parametrize("family", BOTH)
def test_gpu_configs_match_torch(base, dtype, tol, family):
    """Every feasible config on the GPU against torch in float32, bias and a channels_last
    residual on (so the TMA path, not the pointer fallback, runs)."""
    from convdispatch.kernels.device import spec_of

    geom = dataclasses.replace(base, dtype=dtype)
    cands = [c for c in registry.candidates(geom, spec_of("cuda")) if c.family == family]
    assert cands, geom.describe()
    check_candidates_on_gpu(
        cands, geom, tol,
        x_ok=lambda x: rows_view(x[:, :, None] if geom.dims == 2 else x, geom.c) is not None)
