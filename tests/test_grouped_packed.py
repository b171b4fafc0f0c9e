"""grouped_packed under the Triton interpreter against float64 torch, and its feasibility."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from convdispatch.dispatcher import registry, run_candidate
from convdispatch.kernels import grouped_packed as gp
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.device import INTERPRETER, lookup
from convdispatch.kernels.geometry import ConvGeometry
from helpers import (
    check_candidate,
    conv_call,
    launch_filter_vector,
    poisoned_out,
    run_without_interpreter,
    tensors_for,
)

G = functools.partial(ConvGeometry, dtype="float32")
FAMILY = registry.family("grouped_packed")
H100 = lookup("h100")


def cfg(bm: int, bn: int, bk: int, warps: int = 4, stages: int = 3, tile_w: int = 0) -> Config:
    """A config of the family's space (run_candidate refuses others); tile_w > 0: a
    (bm // tile_w) x tile_w pixel block."""
    extra = {"TILE_W": tile_w} if tile_w else {}
    return Config(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages,
                  **extra)


def check(geom: ConvGeometry, config: Config, **kw) -> None:
    check_candidate("grouped_packed", geom, config, **kw)


# (geometry, config): each exercises a tiling case of the packed layout.
CASES = [
    # cg == kg, one tile holding 2..8 groups.
    (G(n=1, c=8, k=8, g=4, h=5, w=5, r=3, s=3, pad=(0, 1, 1)), cfg(64, 16, 16)),
    (G(n=2, c=16, k=16, g=4, h=6, w=6, r=3, s=3, pad=(0, 1, 1)), cfg(64, 16, 16)),
    (G(n=1, c=32, k=32, g=4, h=5, w=5, r=3, s=3, pad=(0, 1, 1)), cfg(32, 32, 32)),
    (G(n=1, c=64, k=64, g=4, h=4, w=4, r=3, s=3, pad=(0, 1, 1)), cfg(128, 32, 16, 4, 4)),
    (G(n=1, c=64, k=64, g=2, h=4, w=4, r=3, s=3, pad=(0, 1, 1)), cfg(64, 64, 64)),
    # cg != kg: narrow and wide channel runs, channel chunks (BLOCK_K < run).
    (G(n=1, c=16, k=32, g=4, h=5, w=5, r=3, s=3, pad=(0, 1, 1)), cfg(64, 16, 16)),
    (G(n=1, c=32, k=16, g=4, h=5, w=5, r=3, s=3, pad=(0, 1, 1)), cfg(64, 16, 16)),
    (G(n=1, c=16, k=4, g=4, h=5, w=5, r=3, s=3, pad=(0, 1, 1)), cfg(32, 32, 32)),  # kg=1
    # Sizes that are no power of two: masked channel run, idle columns, partial last tile.
    (G(n=1, c=9, k=15, g=3, h=5, w=4, r=3, s=3, pad=(0, 1, 1)), cfg(64, 16, 16)),
    (G(n=1, c=20, k=20, g=5, h=5, w=5, r=3, s=3, pad=(0, 1, 1)), cfg(64, 16, 16)),
    (G(n=1, c=14, k=21, g=7, h=4, w=5, r=3, s=3, pad=(0, 1, 1)), cfg(128, 32, 16, 4, 4)),
    # Geometry features.
    (G(n=2, c=16, k=32, g=4, h=9, w=8, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1),
       layout="contiguous"), cfg(32, 32, 32)),
    (G(n=1, c=32, k=32, g=8, h=9, w=9, r=3, s=3, dilation=(1, 2, 2), pad=(0, 2, 1),
       pad_hi=(0, 1, 2)), cfg(64, 32, 32)),
    (G(n=1, c=16, k=16, g=4, h=5, w=7, r=1, s=3, pad=(0, 0, 1)), cfg(64, 16, 16)),  # 1x3
    (G(n=1, c=16, k=16, g=4, d=3, h=4, w=4, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
     cfg(64, 16, 16)),
    (G(n=1, c=16, k=32, g=8, d=4, h=5, w=4, t=3, r=1, s=3, stride=(2, 1, 2),
       pad=(1, 0, 1), dims=3, layout="contiguous"), cfg(128, 32, 16, 4, 4)),
    # 2D pixel blocks: partial blocks at the right and bottom edges, batch and depth
    # boundaries inside the grid, strides, a masked channel run.
    (G(n=2, c=16, k=16, g=4, h=11, w=10, r=3, s=3, pad=(0, 1, 1)), cfg(64, 16, 16, 4, 1, 8)),
    (G(n=1, c=32, k=32, g=4, h=12, w=20, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1),
       layout="contiguous"), cfg(128, 32, 32, 4, 1, 16)),
    (G(n=1, c=14, k=21, g=7, h=9, w=9, r=3, s=3, pad=(0, 1, 1)), cfg(128, 32, 32, 4, 2, 16)),
    (G(n=1, c=16, k=16, g=4, d=3, h=6, w=9, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
     cfg(64, 16, 16, 4, 1, 8)),
    # L1_TAPS: flat and 2D, strided, a partial group block, 3D.
    (G(n=2, c=32, k=32, g=4, h=9, w=11, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
     Config(cfg(128, 32, 32, 4, 4), L1_TAPS=1)),
    (G(n=1, c=24, k=24, g=6, h=10, w=9, r=3, s=3, pad=(0, 1, 1)),
     Config(cfg(128, 16, 16, 4, 4, 16), L1_TAPS=1)),
    (G(n=1, c=16, k=16, g=4, d=3, h=5, w=6, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
     Config(cfg(64, 32, 32, 4, 4, 8), L1_TAPS=1)),
]


def _ids(v):
    return v.describe() if isinstance(v, ConvGeometry) else str(v)


@pytest.mark.parametrize("geom,config", CASES, ids=_ids)
def test_matches_torch(geom, config):
    check(geom, config, bias=False)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["channels_last", "contiguous"])
def test_low_precision(dtype, layout):
    geom = G(n=2, c=16, k=16, g=4, h=5, w=5, r=3, s=3, pad=(0, 1, 1), dtype=dtype,
             layout=layout)
    check(geom, cfg(64, 16, 16), seed=1)


@pytest.mark.parametrize("activation", ["relu", "relu6", "gelu", "silu"])
def test_fused_bias_activation_residual(activation):
    geom = G(n=1, c=32, k=32, g=8, h=5, w=5, r=3, s=3, pad=(0, 1, 1))
    check(geom, cfg(64, 16, 16), activation=activation, with_residual=True, seed=2)


def test_strided_input_view():
    """A channel slice of a wider channels_last tensor: strides read in place."""
    geom = G(n=2, c=16, k=16, g=4, h=5, w=5, r=3, s=3, pad=(0, 1, 1))
    wide = torch.randn(2, 24, 5, 5, generator=torch.Generator().manual_seed(3))
    x = wide.to(memory_format=torch.channels_last)[:, 3:19]
    assert not x.is_contiguous() and not x.is_contiguous(memory_format=torch.channels_last)
    check(geom, cfg(64, 16, 16), x=x)


def test_channels_past_the_last_group_are_never_read():
    """The last tile holds 1 of 4 groups; NaN just past channel C must not leak in."""
    geom = G(n=2, c=20, k=20, g=5, h=5, w=5, r=3, s=3, pad=(0, 1, 1))
    wide = torch.full((2, 24, 5, 5), float("nan")).to(memory_format=torch.channels_last)
    wide[:, :20] = torch.randn(2, 20, 5, 5, generator=torch.Generator().manual_seed(4))
    check(geom, cfg(64, 16, 16), x=wide[:, :20])


def test_int64_offsets_path(monkeypatch):
    monkeypatch.setattr(gp, "needs_int64", lambda call: True)
    geom = G(n=1, c=20, k=20, g=5, h=5, w=5, r=3, s=3, pad=(0, 1, 1))
    check(geom, cfg(64, 16, 16), with_residual=True, activation="relu")
    check(geom, cfg(64, 16, 16, 4, 1, 8), with_residual=True, activation="relu")
    # A tap step (4 taps of 32 channels) with a partial last group tile.
    uneven = G(n=1, c=48, k=48, g=3, h=5, w=5, r=3, s=3, pad=(0, 1, 1))
    check(uneven, tap_step(64, 32, 128), with_residual=True, activation="relu")


# Tiny shapes, one of which makes any config of the space feasible (3D ones: 27 taps for
# eight splits).
TINY = [G(n=1, c=cg * g, k=cg * g, g=g, h=12, w=12, r=3, s=3, pad=(0, 1, 1))
        for cg in (4, 8, 16, 32) for g in (2, 4)] + [
    G(n=1, c=cg * 2, k=cg * 2, g=2, d=3, h=5, w=5, t=3, r=3, s=3, pad=(1, 1, 1), dims=3)
    for cg in (4, 8, 16, 32)]


def split(bm: int, bn: int, bk: int, parts: int, warps: int = 4, stages: int = 3) -> Config:
    return Config(cfg(bm, bn, bk, warps, stages), SPLIT_K=parts)


@pytest.mark.parametrize("geom,config", [
    # 27 taps in 3 and 8 runs (8 does not divide 27), fp16 and a 3D channels-first input
    (G(n=1, c=32, k=32, g=2, d=3, h=5, w=6, t=3, r=3, s=3, pad=(1, 1, 1), dims=3,
       dtype="float16"), split(64, 16, 16, 3)),
    (G(n=2, c=64, k=64, g=4, d=4, h=3, w=5, t=3, r=3, s=3, stride=(2, 1, 1), pad=(1, 1, 1),
       dims=3, layout="contiguous"), split(32, 32, 32, 8)),
    # 2D: channel blocks inside a split, a partial last group tile, strides
    (G(n=1, c=40, k=40, g=5, h=7, w=6, r=3, s=3, stride=(1, 2, 1), pad=(0, 1, 1)),
     split(128, 16, 16, 2)),
    (G(n=1, c=64, k=64, g=2, h=6, w=6, r=3, s=3, pad=(0, 1, 1)), split(64, 64, 64, 4)),
], ids=_ids)
def test_split_k_matches_torch(geom, config):
    """Split-K: each split's run of taps into the workspace, splitk's reduce pass adds
    them and applies bias, residual and activation."""
    assert FAMILY.runnable(geom, config, INTERPRETER) is None
    check(geom, config, with_residual=True, activation="relu")


def test_split_k_is_deterministic_and_offered_only_for_few_tiles():
    """Two runs give the same bits; splits are offered where tiles are fewer than two
    waves and each split keeps two steps; the dgrad twin offers them too (call 214)."""
    geom = G(n=1, c=32, k=32, g=2, d=3, h=5, w=6, t=3, r=3, s=3, pad=(1, 1, 1), dims=3)
    x, w, b = tensors_for(geom)
    outs = []
    for _ in range(2):
        outs.append(poisoned_out(geom, x))
        run_candidate(Candidate("grouped_packed", split(64, 16, 16, 8)), x, w, b, geom,
                      out=outs[-1])
    assert torch.equal(outs[0], outs[1])
    resnext3d = G(n=1, c=512, k=512, g=32, d=2, h=7, w=7, t=3, r=3, s=3, pad=(1, 1, 1),
                  dims=3, dtype="float16")
    splits = {c.config["SPLIT_K"] for c in FAMILY.candidates(resnext3d, H100)
              if c.config.get("SPLIT_K", 1) > 1}
    assert splits == {2, 3, 4, 8}
    batched = dataclasses.replace(resnext3d, n=32)
    assert "fill 132 SMs twice" in FAMILY.feasible(batched, split(64, 32, 32, 2), H100)
    assert "too few" in FAMILY.feasible(dataclasses.replace(resnext3d, d=1, t=1, pad=(0, 1, 1),
                                                            dims=2),
                                        split(64, 32, 32, 8), H100)
    twin = registry.family("dgrad_grouped_packed")  # splits included, tap steps not
    assert twin.configs == FAMILY.dgrad_configs
    assert any(c.get("SPLIT_K", 1) > 1 for c in twin.configs)


def tap_step(bm: int, bn: int, bk: int, warps: int = 4, stages: int = 3) -> Config:
    """A config of PACKED_TAP_TILES (BLOCK_K: whole taps of the tile's channel run)."""
    config = cfg(bm, bn, bk, warps, stages)
    assert config in FAMILY.tap_step_configs, config
    return config


@pytest.mark.parametrize("geom,config,taps", [
    # 4 taps of 16 channels (9 taps: the third step holds 1), zero padding at every edge
    (G(n=2, c=32, k=32, g=8, h=6, w=5, r=3, s=3, pad=(0, 1, 1)), tap_step(64, 16, 64), 4),
    # 8 taps of 16, a stride, channels-first input
    (G(n=1, c=32, k=32, g=8, h=9, w=8, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1),
       layout="contiguous"), tap_step(64, 16, 128), 8),
    # 4 taps of 32 (4 groups of 8), dilation and uneven padding
    (G(n=1, c=32, k=32, g=4, h=9, w=9, r=3, s=3, dilation=(1, 2, 2), pad=(0, 2, 1),
       pad_hi=(0, 1, 2)), tap_step(32, 32, 128), 4),
    # 3D: 27 taps in 4 steps of 8 (5 slots empty), strides; one group of 16 a tile
    (G(n=1, c=32, k=32, g=2, d=4, h=5, w=6, t=3, r=3, s=3, stride=(2, 2, 1), pad=(1, 1, 1),
       dims=3), tap_step(64, 16, 128), 8),
    # 3D, 2 taps of 64 channels (4 groups of 16), a partial last tile of 1 group: the
    # channel run masked past C
    (G(n=1, c=48, k=48, g=3, d=3, h=4, w=4, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
     tap_step(64, 32, 128), 4),
    (G(n=1, c=64, k=64, g=4, d=3, h=4, w=5, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
     tap_step(64, 64, 128), 2),
], ids=_ids)
def test_tap_steps_match_torch(geom, config, taps):
    """BLOCK_K of several whole taps: each step gathers TAPS taps of the channel run
    (zeros past the last tap and the input's edges) against float64 torch, with bias,
    a residual and ReLU."""
    assert gp.taps_per_step(geom, config["BLOCK_N"], config["BLOCK_K"]) == taps
    assert FAMILY.runnable(geom, config, INTERPRETER) is None
    check(geom, config, with_residual=True, activation="relu")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_tap_steps_low_precision(dtype):
    geom = G(n=1, c=32, k=32, g=4, d=3, h=4, w=5, t=3, r=3, s=3, pad=(1, 1, 1), dims=3,
             dtype=dtype)
    check(geom, tap_step(32, 32, 256, 4, 2), seed=5)


def test_tap_step_rules():
    """Tap steps are offered where the channel run is a power of two of 16 or more, BLOCK_K
    is 2 runs or more, and half the taps a step would not take as many steps; the features
    count the steps as the kernel does; the dgrad twin does not offer them."""
    resnext3d = G(n=1, c=256, k=256, g=32, d=8, h=28, w=28, t=3, r=3, s=3,
                  stride=(2, 2, 2), pad=(1, 1, 1), dims=3, dtype="float16")
    assert FAMILY.feasible(resnext3d, tap_step(64, 32, 128), H100) is None
    assert gp.packed_iters(resnext3d, 32, 128) == 7  # 27 taps, 4 a step
    assert gp.packed_iters(resnext3d, 32, 256) == 4
    assert gp.packed_iters(resnext3d, 32, 32) == 27
    pointwise = dataclasses.replace(resnext3d, t=1, r=1, s=1, pad=(0, 0, 0))
    assert "as many steps" in FAMILY.feasible(pointwise, tap_step(64, 32, 128), H100)
    odd = G(n=1, c=24, k=24, g=4, h=8, w=8, r=3, s=3, pad=(0, 1, 1))  # runs of 6 and 12
    assert "not 2 or more taps" in FAMILY.feasible(odd, tap_step(64, 16, 64), H100)
    assert all(gp.tap_step_rejects(odd, c["BLOCK_N"], c["BLOCK_K"])
               for c in FAMILY.tap_step_configs)
    # A single-tap config never becomes a tap step: its BLOCK_K fits the run.
    assert all(gp.taps_per_step(g, c["BLOCK_N"], c["BLOCK_K"]) == 1 for g in TINY
               for c in FAMILY.dgrad_configs if FAMILY.feasible(g, c, H100) is None)
    twin = registry.family("dgrad_grouped_packed")
    assert not set(FAMILY.tap_step_configs) & set(twin.configs)

    from convdispatch.heuristics.features import FEATURE_NAMES, feature_matrix

    cands = [Candidate("grouped_packed", c) for c in (tap_step(64, 32, 128),
                                                      tap_step(64, 32, 256, 4, 2),
                                                      cfg(64, 32, 32))]
    steps = feature_matrix(resnext3d, cands, H100)[:, FEATURE_NAMES.index("k_steps")]
    assert steps.tolist() == [7, 4, 27]


def test_every_config_runs(monkeypatch):
    """Each config of the declared space runs once and is right on some tiny shape."""
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    for config in FAMILY.configs:
        geom = next((g for g in TINY if FAMILY.feasible(g, config, INTERPRETER) is None), None)
        assert geom is not None, f"no tiny shape makes grouped_packed:{config} feasible"
        check(geom, config, bias=False, tol=1e-5)


def test_space_is_declared_and_registered():
    names = [f.name for f in registry.families()]
    assert names.index("grouped_packed") == names.index("grouped_gemm") + 1
    assert 26 <= len(FAMILY.configs) <= 100 and len(set(FAMILY.configs)) == len(FAMILY.configs)
    for c in FAMILY.configs:
        assert min(c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"]) >= 16, c  # tl.dot's minimum


@pytest.mark.parametrize("geom,why", [
    (G(n=1, c=16, k=16, h=4, w=4, r=3, s=3), "not a grouped"),
    (G(n=1, c=16, k=16, g=16, h=4, w=4, r=3, s=3), "depthwise"),
    (G(n=1, c=16, k=32, g=16, h=4, w=4, r=3, s=3), "depthwise"),
    (G(n=1, c=66, k=66, g=2, h=4, w=4, r=3, s=3), "33 input channels"),
    (G(n=1, c=32, k=160, g=2, h=4, w=4, r=3, s=3), "80 output channels"),
])
def test_supports_rejects(geom, why):
    assert why in FAMILY.supports(geom)
    assert not [c for c in registry.candidates(geom, H100) if c.family == "grouped_packed"]


@pytest.mark.parametrize("cg", [2, 3, 4, 8, 16, 32])
def test_supports_few_channel_groups(cg):
    geom = G(n=8, c=32 * cg, k=32 * cg, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1),
             dtype="float16")
    assert FAMILY.supports(geom) is None
    assert [c for c in registry.candidates(geom, H100) if c.family == "grouped_packed"]


def test_config_rules():
    geom = G(n=32, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1))
    kg20 = G(n=32, c=80, k=80, g=4, h=14, w=14, r=3, s=3, pad=(0, 1, 1))
    assert "holds no whole group" in FAMILY.runnable(kg20, cfg(64, 16, 16), H100)
    assert "idle" in FAMILY.feasible(kg20, cfg(128, 32, 32), H100)  # 20 of 32 columns
    assert FAMILY.feasible(kg20, cfg(128, 64, 64, 4, 4), H100) is None  # 3 x 20 of 64
    # BLOCK_K beyond the channel run of the tile (4 groups x 2 channels = 8).
    cg2 = G(n=32, c=64, k=256, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1))
    assert "channel run" in FAMILY.feasible(cg2, cfg(128, 32, 32), H100)
    # Tiles far larger than the problem, and shared memory on the H100.
    small = G(n=1, c=128, k=128, g=32, h=4, w=4, r=3, s=3, pad=(0, 1, 1))
    assert "output pixels" in FAMILY.feasible(small, cfg(256, 32, 32, 8), H100)
    fp32 = G(n=32, c=1024, k=1024, g=32, h=14, w=14, r=3, s=3, pad=(0, 1, 1))
    assert "shared memory" in FAMILY.feasible(fp32, cfg(256, 64, 64, 8, 3), H100)
    assert FAMILY.feasible(geom, cfg(256, 32, 32, 8, 3), H100) is None
    assert "packs 32 groups" in FAMILY.feasible(geom, cfg(128, 128, 64, 8, 3), H100)
    # L1_TAPS promises 8-byte aligned channel runs: channels_last, C and the run.
    l1 = Config(cfg(128, 32, 32, 4, 4), L1_TAPS=1)
    assert FAMILY.feasible(geom, l1, H100) is None
    nchw = dataclasses.replace(geom, layout="contiguous")
    assert "channels_last" in FAMILY.runnable(nchw, l1, H100)
    cg3 = G(n=8, c=96, k=96, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1), dtype="float16")
    assert "8-byte aligned" in FAMILY.runnable(cg3, l1, H100)  # runs of 30 channels
    assert FAMILY.runnable(dataclasses.replace(cg3, dtype="float32"), l1, H100) is None


_PTX_COPIES = """
import json, re, sys
sys.path.insert(0, sys.argv[1])
from sass_count import compile_kernel
from convdispatch.kernels.grouped_packed import packed_kernel
const = dict(sxc=1, syc=1, src=1, swc=1, CG=8, KG=8, GPT=4, BLOCK_M=128, BLOCK_N=32, BLOCK_K=32,
             TILE_W=16, EVEN_C=True, HAS_DEPTH=False, ACT=0, HAS_BIAS=False, HAS_RES=False,
             PREC="ieee", UPCAST=False, INT64=False, SPLIT_K=1, W_VEC=1, TAPS=1)
print(json.dumps({vec: sorted(set(re.findall(r"cp[.]async[.](c[ag])[.]shared[.]global",
                  compile_kernel(packed_kernel, dict(const, L1_VEC=vec), 4, 3).asm["ptx"])))
                  for vec in (0, 4)}))
"""


def test_l1_taps_copies_are_cached_in_l1():
    """L1_TAPS turns the pipelined input copies from 16-byte cp.async.cg (L2 only) into
    8-byte cp.async.ca (through L1): compiled for sm_90 in a process without the
    interpreter (no GPU needed)."""
    gpu_dir = Path(__file__).parents[1] / "validation" / "gpu"
    got = json.loads(run_without_interpreter(_PTX_COPIES, str(gpu_dir)))
    assert got == {"0": ["cg"], "4": ["ca"]}
    l1 = [c for c in FAMILY.configs if c.get("L1_TAPS")]
    assert l1 and all(c["num_stages"] >= 2 for c in l1)  # unpipelined loads use L1 anyway


def test_filter_vector_divides_every_column_offset():
    """W_VEC: 8 channels a group of 27 taps (offsets k * 216 + taps * 8) are 16-byte runs
    in float16 though no stride is a multiple of 16; 4 channels a group are 8-byte ones;
    none where channels are not unit-stride or the filter is read transposed (dgrad)."""
    res3d = G(n=1, c=64, k=64, g=8, d=3, h=4, w=4, t=3, r=3, s=3, pad=(1, 1, 1), dims=3,
              dtype="float16")
    assert launch_filter_vector(conv_call(res3d)) == 8
    assert launch_filter_vector(conv_call(dataclasses.replace(res3d, dtype="float32"))) == 4
    assert launch_filter_vector(conv_call(dataclasses.replace(res3d, c=32, k=32))) == 4  # 4 a group
    assert launch_filter_vector(conv_call(dataclasses.replace(res3d, layout="contiguous"))) == 1
    assert launch_filter_vector(conv_call(res3d, transposed_w=True)) == 1
    flipped = conv_call(res3d, flip_taps=True)  # negative tap strides divide as well
    assert launch_filter_vector(flipped) == 8
    odd = G(n=1, c=24, k=24, g=4, h=5, w=5, r=3, s=3, pad=(0, 1, 1), dtype="float16")
    assert launch_filter_vector(conv_call(odd)) == 2  # 6 channels a group


_PTX_FILTER_LOADS = """
import json, re, sys
sys.path.insert(0, sys.argv[1])
from sass_count import compile_kernel
from convdispatch.kernels.grouped_packed import packed_kernel
# ResNeXt3D-50 layer2's specialisation: C/G = 8, 27 taps; the filter strides (216, 72, 24,
# 8) are runtime integers no multiple of 16, so Triton proves nothing of them.
const = dict(sxc=1, syc=1, src=1, swc=1, CG=8, KG=8, GPT=4, BLOCK_M=128, BLOCK_N=32,
             BLOCK_K=32, TILE_W=0, EVEN_C=True, HAS_DEPTH=True, ACT=0, HAS_BIAS=False,
             HAS_RES=False, PREC="ieee", UPCAST=False, INT64=False, SPLIT_K=1, L1_VEC=0,
             TRANSPOSED=False, TAPS=1)
out = {}
for vec in (1, 8):
    ptx = compile_kernel(packed_kernel, dict(const, W_VEC=vec), 4, 3).asm["ptx"]
    out[vec] = {"b16_loads": len(re.findall(r"ld[.]global[.]b16", ptx)),
                "copies": len(re.findall(r"cp[.]async[.]cg[.]shared[.]global", ptx))}
print(json.dumps(out))
"""


def test_filter_runs_load_as_16_byte_copies():
    """With W_VEC=8 the block-diagonal filter tile of 8 channels a group loads in pipelined
    16-byte copies; without it, in 2-byte loads outside the pipeline (compiled for sm_90
    in a process without the interpreter, no GPU needed)."""
    gpu_dir = Path(__file__).parents[1] / "validation" / "gpu"
    got = json.loads(run_without_interpreter(_PTX_FILTER_LOADS, str(gpu_dir)))
    assert got["1"]["b16_loads"] > 0 and got["8"]["b16_loads"] == 0, got
    assert got["8"]["copies"] > got["1"]["copies"], got


_PTX_TAP_STEPS = """
import json, re, sys
sys.path.insert(0, sys.argv[1])
from sass_count import compile_kernel
from convdispatch.kernels.grouped_packed import packed_kernel
base = dict(sxc=1, syc=1, src=1, swc=1, TILE_W=0, EVEN_C=True, ACT=0, HAS_BIAS=False,
            HAS_RES=False, PREC="ieee", UPCAST=False, INT64=False, SPLIT_K=1, L1_VEC=0,
            TRANSPOSED=False)
out = {}
# (CG, GPT, BLOCK_N, BLOCK_K, TAPS, HAS_DEPTH, W_VEC): 4 and 8 channels a group in 2D and 3D
for cg, gpt, bn, bk, taps, depth, vec in ((8, 4, 32, 128, 4, True, 8),
                                          (4, 4, 16, 64, 4, False, 4)):
    ptx = compile_kernel(packed_kernel, dict(base, CG=cg, KG=cg, GPT=gpt, BLOCK_M=64,
                                             BLOCK_N=bn, BLOCK_K=bk, TAPS=taps,
                                             HAS_DEPTH=depth, W_VEC=vec), 4, 3).asm["ptx"]
    out[cg] = {"loads": len(re.findall(r"ld[.]global", ptx)),
               "copy_bytes": sorted(set(re.findall(
                   r"cp[.]async[.]c[ag][.]shared[.]global [^,]*, [^,]*, (0x[0-9a-f]+)", ptx)))}
print(json.dumps(out))
"""


def test_tap_step_operands_load_as_pipelined_copies():
    """A tap step's input and filter tiles load as cp.async copies inside the software
    pipeline (16 bytes; 8 for the filter of 4 channels a group), no plain global load:
    written as (j % run) // CG, the filter's group test left its loads as 2-byte
    ld.global (compiled for sm_90 in a process without the interpreter, no GPU needed)."""
    gpu_dir = Path(__file__).parents[1] / "validation" / "gpu"
    got = json.loads(run_without_interpreter(_PTX_TAP_STEPS, str(gpu_dir)))
    assert got == {"8": {"loads": 0, "copy_bytes": ["0x10"]},
                   "4": {"loads": 0, "copy_bytes": ["0x10", "0x8"]}}, got


def test_forced_config_too_narrow_raises():
    geom = G(n=1, c=80, k=80, g=4, h=4, w=4, r=3, s=3, pad=(0, 1, 1))
    x, w, _ = tensors_for(geom)
    with pytest.raises(ValueError, match="holds no whole group"):
        run_candidate(Candidate("grouped_packed", cfg(64, 16, 16)), x, w, None, geom)


# --- on a GPU (CONVDISPATCH_GPU_TESTS=1 ... -m gpu through the device tool) --------------------
GPU_CASES = [
    ConvGeometry(n=8, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1)),  # ResNeXt cg=4
    ConvGeometry(n=8, c=256, k=256, g=32, h=56, w=56, r=3, s=3, stride=(1, 2, 2),
                 pad=(0, 1, 1)),
    ConvGeometry(n=8, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),  # cg=32
    ConvGeometry(n=4, c=27, k=45, g=9, h=17, w=19, r=3, s=3, pad=(0, 1, 1)),  # cg=3, kg=5
    ConvGeometry(n=2, c=64, k=64, g=8, d=6, h=14, w=14, t=3, r=3, s=3, pad=(1, 1, 1),
                 dims=3),
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,tol", [("float16", 1e-2), ("bfloat16", 3e-2),
                                       ("float32", 1e-2)])
@pytest.mark.parametrize("layout", ["channels_last", "contiguous"])
@pytest.mark.parametrize("base", GPU_CASES, ids=_ids)
def test_gpu_configs_match_torch(base, dtype, tol, layout):
    from convdispatch.kernels.device import spec_of

    geom = dataclasses.replace(base, dtype=dtype, layout=layout)
    cands = [c for c in registry.candidates(geom, spec_of("cuda"))
             if c.family == "grouped_packed"]
    assert cands, geom.describe()
    x, w, b = (t.cuda() for t in tensors_for(geom, bias=True))
    res = torch.randn(poisoned_out(geom, x).shape, device="cuda", dtype=x.dtype)
    conv = F.conv2d if geom.dims == 2 else F.conv3d
    lead = 3 - geom.dims
    ref = F.relu(conv(x.float(), w.float(), b.float(), geom.stride[lead:], geom.pad[lead:],
                      geom.dilation[lead:], geom.g) + res.float())
    l1 = [c for c in cands if c.config.get("L1_TAPS")]
    assert bool(l1) == (layout == "channels_last" and geom.c % 4 == 0)
    for cand in cands[:: max(1, len(cands) // 3)] + l1[:: max(1, len(l1) // 2)]:
        out = poisoned_out(geom, x).cuda()
        run_candidate(cand, x, w, b, geom, out=out, activation="relu", residual=res)
        err = float((out.float() - ref).norm() / ref.norm())
        assert err < tol, f"{cand.id} on {geom.describe()}: rel err {err:.2e}"


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,tol", [("float16", 1e-2), ("bfloat16", 3e-2), ("float32", 1e-2)])
@pytest.mark.parametrize("base", [
    G(n=1, c=512, k=512, g=32, d=2, h=7, w=7, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
    G(n=1, c=256, k=256, g=32, h=28, w=28, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1)),
], ids=_ids)
def test_gpu_split_k_matches_torch(base, dtype, tol):
    """Every feasible split-K config (3D ResNeXt layer3.1 and ResNeXt-50 layer3.0 at batch
    1) against torch, bias and a residual on."""
    from convdispatch.kernels.device import spec_of
    from helpers import check_candidates_on_gpu

    geom = dataclasses.replace(base, dtype=dtype)
    cands = [c for c in FAMILY.candidates(geom, spec_of("cuda"))
             if c.config.get("SPLIT_K", 1) > 1]
    assert cands, geom.describe()
    check_candidates_on_gpu(cands, geom, tol)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,tol", [("float16", 1e-2), ("bfloat16", 3e-2)])
@pytest.mark.parametrize("base", [
    G(n=1, c=256, k=256, g=32, d=8, h=28, w=28, t=3, r=3, s=3, stride=(2, 2, 2),
      pad=(1, 1, 1), dims=3),
    G(n=1, c=512, k=512, g=32, d=2, h=7, w=7, t=3, r=3, s=3, pad=(1, 1, 1), dims=3),
    G(n=8, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
    G(n=4, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1)),
], ids=_ids)
def test_gpu_tap_steps_match_torch(base, dtype, tol):
    """Every feasible tap-step config (3D ResNeXt layer2.0 and layer3.1 at batch 1,
    ResNeXt-50 layer4.1 and layer1.0) against torch, bias, a residual and ReLU on. (The
    sweep checks each of its rows against torch as well; float32 there.)"""
    from convdispatch.kernels.device import spec_of
    from helpers import check_candidates_on_gpu

    geom = dataclasses.replace(base, dtype=dtype)
    cands = [c for c in FAMILY.candidates(geom, spec_of("cuda"))
             if c.config in FAMILY.tap_step_configs]
    assert cands, geom.describe()
    check_candidates_on_gpu(cands, geom, tol)
