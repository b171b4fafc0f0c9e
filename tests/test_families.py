"""Every kernel family x feature under the Triton interpreter, against float64 torch."""

from __future__ import annotations

import functools

import pytest
import torch
from convdispatch.dispatcher import registry, run_candidate
from convdispatch.kernels import common
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.device import INTERPRETER, lookup
from convdispatch.kernels.geometry import ConvGeometry
from helpers import TOL, poisoned_out, reference, rel_err, tensors_for

G = functools.partial(ConvGeometry, dtype="float32")

# (family, geometry) pairs that exercise each family's own path and features.
CASES = [
    ("implicit_gemm", G(n=2, c=32, k=32, h=6, w=6, r=3, s=3, pad=(0, 1, 1))),
    ("implicit_gemm", G(n=1, c=40, k=24, h=7, w=5, r=1, s=7, pad=(0, 0, 3))),  # 1x7, odd C
    ("implicit_gemm", G(n=2, c=32, k=16, h=9, w=9, r=3, s=3, stride=(1, 2, 2),
                        dilation=(1, 2, 2), pad=(0, 2, 1))),
    ("implicit_gemm", G(n=1, c=32, k=16, d=3, h=5, w=4, t=3, r=3, s=3, pad=(1, 1, 1),
                        dims=3)),
    ("implicit_gemm", G(n=1, c=32, k=32, h=5, w=5, r=3, s=3, pad=(0, 1, 1),
                        layout="contiguous")),
    # One input plane but depth padding: two output planes, one all padding (has_depth).
    ("implicit_gemm", G(n=1, c=32, k=16, d=1, h=4, w=5, t=1, r=3, s=3, pad=(0, 1, 1),
                        pad_hi=(1, 1, 1), dims=3)),
    ("pointwise", G(n=2, c=48, k=32, h=5, w=5, r=1, s=1)),
    ("pointwise", G(n=2, c=32, k=64, h=7, w=7, r=1, s=1, stride=(1, 2, 2),
                    layout="contiguous")),
    ("pointwise", G(n=1, c=32, k=32, d=2, h=3, w=3, t=1, r=1, s=1, dims=3)),
    ("pointwise_tma", G(n=2, c=48, k=40, h=5, w=5, r=1, s=1)),
    ("pointwise_tma", G(n=1, c=32, k=32, d=2, h=3, w=3, t=1, r=1, s=1, dims=3)),
    ("pointwise_tma_persistent", G(n=2, c=48, k=40, h=5, w=5, r=1, s=1)),
    ("implicit_gemm_tma", G(n=2, c=32, k=32, h=8, w=6, r=3, s=3, stride=(1, 2, 2),
                            pad=(0, 1, 1))),  # phase boxes
    ("implicit_gemm_tma_persistent", G(n=2, c=32, k=32, h=6, w=7, r=3, s=3, pad=(0, 1, 1))),
    ("implicit_gemm_tma_persistent", G(n=1, c=64, k=32, h=8, w=12, r=1, s=1,
                                       stride=(1, 2, 2))),  # a strided 1x1 by phase boxes
    ("grouped_gemm", G(n=2, c=64, k=64, g=4, h=5, w=5, r=3, s=3, pad=(0, 1, 1))),
    ("grouped_gemm", G(n=1, c=48, k=96, g=3, h=6, w=6, r=3, s=3, stride=(1, 2, 2),
                       pad=(0, 1, 1), layout="contiguous")),
    ("grouped_direct", G(n=2, c=24, k=24, g=24, h=6, w=6, r=3, s=3, pad=(0, 1, 1))),  # dw
    ("grouped_direct", G(n=1, c=16, k=32, g=16, h=7, w=7, r=5, s=5, stride=(1, 2, 2),
                         pad=(0, 2, 2))),  # depthwise multiplier 2
    ("grouped_direct", G(n=2, c=32, k=32, g=8, h=5, w=5, r=3, s=3, pad=(0, 1, 1),
                         dilation=(1, 2, 2), pad_hi=(0, 1, 1))),
    ("grouped_direct", G(n=1, c=8, k=8, g=8, d=3, h=4, w=4, t=3, r=3, s=3, pad=(1, 1, 1),
                         dims=3)),
    ("grouped_direct", G(n=1, c=15, k=18, g=3, h=7, w=6, r=3, s=3, stride=(1, 2, 2),
                         pad=(0, 1, 1), layout="contiguous")),  # 5 -> 6 a group, padded
    ("grouped_rows", G(n=2, c=32, k=32, g=8, h=9, w=10, r=3, s=3, pad=(0, 1, 1))),
    ("grouped_rows", G(n=1, c=24, k=48, g=3, h=9, w=7, r=3, s=3, stride=(1, 2, 2),
                       pad=(0, 1, 1), layout="contiguous")),  # 8 -> 16 a group
    ("grouped_rows", G(n=1, c=20, k=20, g=5, h=10, w=9, r=5, s=3, dilation=(1, 2, 1),
                       pad=(0, 4, 1))),  # 4 a group, 5 groups: a partial group block
    ("depthwise", G(n=2, c=24, k=24, g=24, h=9, w=11, r=3, s=3, pad=(0, 1, 1))),
    ("depthwise", G(n=1, c=16, k=32, g=16, h=9, w=7, r=5, s=5, stride=(1, 2, 2),
                    pad=(0, 2, 2), layout="contiguous")),  # multiplier 2
    ("depthwise", G(n=2, c=16, k=16, g=16, h=9, w=8, r=3, s=3, dilation=(1, 2, 1),
                    pad=(0, 2, 1))),
    ("depthwise", G(n=1, c=8, k=8, g=8, d=3, h=5, w=4, t=3, r=3, s=3, pad=(1, 1, 1),
                    dims=3)),
    ("depthwise_rows", G(n=2, c=24, k=24, g=24, h=9, w=11, r=3, s=3, pad=(0, 1, 1))),
    ("depthwise_rows", G(n=1, c=16, k=32, g=16, h=9, w=7, r=5, s=5, stride=(1, 2, 2),
                         pad=(0, 2, 2), layout="contiguous")),  # multiplier 2
    ("depthwise_rows", G(n=2, c=16, k=16, g=16, h=10, w=8, r=3, s=3, dilation=(1, 2, 1),
                         pad=(0, 2, 1))),
    ("depthwise_rows", G(n=1, c=16, k=16, g=16, h=11, w=9, r=3, s=2, stride=(1, 3, 2),
                         dilation=(1, 1, 2), pad=(0, 2, 1))),
    ("depthwise_span", G(n=2, c=24, k=24, g=24, h=9, w=11, r=3, s=3, pad=(0, 1, 1))),
    ("depthwise_span", G(n=1, c=12, k=24, g=12, h=9, w=7, r=5, s=5, stride=(1, 2, 2),
                         pad=(0, 2, 2))),  # multiplier 2, 24 channels: spans cross pixels
    ("depthwise_span", G(n=2, c=20, k=20, g=20, h=10, w=8, r=3, s=3, dilation=(1, 2, 1),
                         pad=(0, 2, 1))),
    ("depthwise_span", G(n=1, c=18, k=18, g=18, h=11, w=9, r=3, s=2, stride=(1, 3, 2),
                         dilation=(1, 1, 2), pad=(0, 2, 1))),
    ("stem", G(n=1, c=3, k=32, h=15, w=15, r=7, s=7, stride=(1, 2, 2), pad=(0, 3, 3))),
    ("stem", G(n=2, c=4, k=16, h=8, w=8, r=3, s=3, pad=(0, 1, 1), layout="contiguous")),
    ("stem", G(n=1, c=3, k=16, d=4, h=8, w=8, t=3, r=7, s=7, stride=(1, 2, 2),
               pad=(1, 3, 3), dims=3)),
    ("splitk", G(n=1, c=64, k=32, h=3, w=3, r=3, s=3, pad=(0, 1, 1))),
    ("splitk", G(n=1, c=96, k=48, h=4, w=4, r=3, s=3, pad=(0, 1, 1), layout="contiguous")),
    ("splitk", G(n=1, c=64, k=32, d=2, h=3, w=3, t=3, r=3, s=1, pad=(1, 1, 0), dims=3)),
]


def _first(family: str, geom: ConvGeometry) -> Candidate:
    cands = [c for c in registry.candidates(geom, INTERPRETER) if c.family == family]
    assert cands, f"{family} has no feasible config for {geom.describe()}"
    return cands[len(cands) // 2]


def _check(cand, geom, activation=None, with_residual=False, seed=0):
    x, w, b = tensors_for(geom, seed=seed, bias=True)
    res = None
    if with_residual:
        res = poisoned_out(geom, x).normal_()
    out = poisoned_out(geom, x)
    run_candidate(cand, x, w, b, geom, out=out, activation=activation, residual=res)
    err = rel_err(out, reference(geom, x, w, b, res, activation))
    assert err < TOL[geom.dtype], f"{cand.id} on {geom.describe()}: rel err {err:.2e}"


@pytest.mark.parametrize("family,geom", CASES, ids=lambda v: getattr(v, "name", None)
                         or (v.describe() if isinstance(v, ConvGeometry) else str(v)))
def test_family_matches_torch(family, geom):
    _check(_first(family, geom), geom)


@pytest.mark.parametrize("family", sorted({f for f, _ in CASES}))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_family_low_precision(family, dtype):
    geom = next(g for f, g in CASES if f == family)
    geom = ConvGeometry(**{**_fields(geom), "dtype": dtype})
    _check(_first(family, geom), geom, seed=1)


@pytest.mark.parametrize("family", sorted({f for f, _ in CASES}))
@pytest.mark.parametrize("activation", ["relu", "relu6", "gelu", "silu"])
def test_family_fused_epilogue(family, activation):
    geom = next(g for f, g in CASES if f == family)
    _check(_first(family, geom), geom, activation=activation, with_residual=True, seed=2)


def _fields(geom: ConvGeometry) -> dict:
    return dict(n=geom.n, c=geom.c, k=geom.k, g=geom.g, d=geom.d, h=geom.h, w=geom.w,
                t=geom.t, r=geom.r, s=geom.s, stride=geom.stride, pad=geom.pad,
                dilation=geom.dilation, pad_hi=geom.pad_hi, dims=geom.dims, dtype=geom.dtype,
                layout=geom.layout)


# Tiny shapes, one of which makes any config of a family feasible.
TINY = {
    "implicit_gemm": [G(n=1, c=c, k=k, h=h, w=h, r=3, s=3, pad=(0, 1, 1))
                      for c in (32, 64, 128) for k in (32, 64, 256) for h in (4, 16)],
    "pointwise": [G(n=1, c=c, k=k, h=h, w=h, r=1, s=1)
                  for c in (32, 64, 128) for k in (32, 64, 256) for h in (4, 16)],
    "grouped_gemm": [G(n=1, c=2 * c, k=2 * k, g=2, h=h, w=h, r=3, s=3, pad=(0, 1, 1))
                     for c in (16, 32, 64) for k in (16, 32, 64, 128) for h in (4, 16)],
    "grouped_direct": [G(n=1, c=k, k=k, g=k, h=h, w=h, r=3, s=3, pad=(0, 1, 1))
                       for k in (16, 32, 128, 256) for h in (2, 4, 8, 16)],
    "depthwise": [G(n=1, c=k, k=k, g=k, h=h, w=h, r=3, s=3, pad=(0, 1, 1))
                  for k in (16, 32, 64, 128) for h in (4, 8, 16, 32)],
    "grouped_rows": [G(n=1, c=4 * g, k=4 * g, g=g, h=h, w=h, r=3, s=3, pad=(0, 1, 1))
                     for g in (4, 8, 16) for h in (8, 16, 32)],
    "depthwise_rows": [G(n=1, c=k, k=k, g=k, h=h, w=h, r=3, s=3, pad=(0, 1, 1))
                       for k in (16, 32, 64, 128) for h in (4, 8, 16, 32)],
    "depthwise_span": [G(n=1, c=k, k=k, g=k, h=h, w=h, r=3, s=3, pad=(0, 1, 1))
                       for k in (24, 144) for h in (4, 8, 16)],
    "stem": [G(n=1, c=3, k=k, h=h, w=h, r=r, s=r, pad=(0, 1, 1))
             for k in (32, 64, 128) for h in (6, 16) for r in (3, 5)],
    "splitk": [G(n=1, c=c, k=k, h=h, w=h, r=3, s=3, pad=(0, 1, 1))
               for c in (64, 256) for k in (32, 64, 128) for h in (3, 9)],
}


@pytest.mark.slow
@pytest.mark.parametrize("family", [f.name for f in registry.families()
                                    if f.name in TINY])
def test_every_config_runs(family, monkeypatch):
    """Each config of the declared space runs once and is right on some tiny shape."""
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    fam = registry.family(family)
    for cfg in fam.configs:
        geom = next((g for g in TINY[family] if fam.feasible(g, cfg, INTERPRETER) is None),
                    None)
        assert geom is not None, f"no tiny shape makes {family}:{cfg} feasible"
        x, w, b = tensors_for(geom, bias=False)
        out = poisoned_out(geom, x)
        run_candidate(Candidate(family, cfg), x, w, None, geom, out=out)
        err = rel_err(out, reference(geom, x, w))
        assert err < 1e-5, f"{family}:{cfg} rel err {err:.2e}"


@pytest.mark.slow
def test_grouped_direct_every_config_runs_on_groups(monkeypatch):
    """grouped_direct's grouped path (2..16 channels a group, padded to powers of two
    in the program) for every config that can hold a group."""
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    fam = registry.family("grouped_direct")
    shapes = [G(n=1, c=4 * g, k=kg * g, g=g, h=h, w=h, r=3, s=3, pad=(0, 1, 1))
              for kg in (4, 3) for g in (8, 64) for h in (4, 16)]
    ran = 0
    for cfg in fam.configs:
        geom = next((g for g in shapes if fam.feasible(g, cfg, INTERPRETER) is None), None)
        if geom is None:
            continue
        x, w, b = tensors_for(geom, bias=False)
        out = poisoned_out(geom, x)
        run_candidate(Candidate("grouped_direct", cfg), x, w, None, geom, out=out)
        err = rel_err(out, reference(geom, x, w))
        assert err < 1e-5, f"grouped_direct:{cfg} on {geom.describe()}: rel err {err:.2e}"
        ran += 1
    assert ran >= len(fam.configs) // 2


def test_float32_follows_cudnn_allow_tf32(monkeypatch):
    """The matrix-unit precision follows torch's conv flag (the interpreter computes
    both exactly, so the numeric difference is checked in the GPU tests)."""
    from convdispatch.kernels.base import ConvCall

    call = ConvCall(None, None, None, None, None, CASES[0][1])
    for flag, want in ((False, "ieee"), (True, "tf32")):
        monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", flag)
        call.allow_tf32 = torch.backends.cudnn.allow_tf32
        assert common.dot_precision(call) == want
    call.geom = ConvGeometry(**{**_fields(CASES[0][1]), "dtype": "float16"})
    assert common.dot_precision(call) == "ieee"


def test_families_have_configs_and_rules():
    for fam in registry.families():
        assert fam.configs, fam.name
        assert len(set(fam.configs)) == len(fam.configs), f"{fam.name} repeats a config"
        assert fam.summary


def test_int64_offsets_path_is_correct(monkeypatch):
    import convdispatch.kernels.depthwise as dw
    import convdispatch.kernels.depthwise_rows as dwr
    import convdispatch.kernels.depthwise_span as dws
    import convdispatch.kernels.grouped_direct as gd
    import convdispatch.kernels.grouped_rows as gr
    import convdispatch.kernels.implicit_gemm as ig
    import convdispatch.kernels.pointwise as pw
    import convdispatch.kernels.splitk as sk
    import convdispatch.kernels.stem as st

    for mod in (common, dw, dwr, dws, gd, gr, ig, pw, sk, st):
        monkeypatch.setattr(mod, "needs_int64", lambda call: True)
    cases = [CASES[0], CASES[5], CASES[10], CASES[14]]
    cases += [next(c for c in CASES if c[0] == f)
              for f in ("grouped_rows", "depthwise", "depthwise_rows", "depthwise_span", "stem",
                        "splitk")]
    for family, geom in cases:
        _check(_first(family, geom), geom)


def test_splitk_reduce_pass_spreads_over_programs():
    """The reduce pass's blocks leave about REDUCE_PROGRAMS programs (a 196 x 256 output:
    392, not the 16 of 64 x 64 blocks), at most 64 x 64 outputs each, channel blocks no
    wider than K needs; and a split launch's result does not depend on the blocks."""
    import unittest.mock

    from convdispatch.kernels import splitk as sk
    from convdispatch.kernels.base import next_pow2
    from convdispatch.kernels.common import cdiv

    for m, k in ((196, 256), (49, 512), (4096, 8), (784, 512), (10**6, 64), (1, 3)):
        bm, bn, warps = sk.reduce_block(m, k)
        assert bm <= 64 and bn <= min(next_pow2(k), 64) and 1 <= warps <= 4
        programs = cdiv(m, bm) * cdiv(k, bn)
        assert programs >= min(sk.REDUCE_PROGRAMS, m * cdiv(k, bn)) or bm == 64, (m, k)
    assert sk.reduce_block(196, 256) == (2, 64, 1)
    geom = G(n=1, c=64, k=48, h=5, w=5, r=3, s=3, pad=(0, 1, 1))
    cand = _first("splitk", geom)
    x, w, b = tensors_for(geom)
    ref = run_candidate(cand, x, w, b, geom)
    for blocks in ((64, 64, 4), (1, 16, 1)):
        with unittest.mock.patch.object(sk, "reduce_block", lambda m, k, v=blocks: v):
            assert torch.equal(run_candidate(cand, x, w, b, geom), ref), blocks


def test_needs_int64_detects_large_offsets():
    from convdispatch.kernels.base import ConvCall

    geom = G(n=1, c=32, k=32, h=4, w=4, r=1, s=1)
    small = torch.empty((1, 32, 1, 4, 4), device="meta")
    big = torch.empty((70000, 32, 1, 32, 32), device="meta")  # 2.3e9 elements
    call = ConvCall(small, torch.empty((32, 32, 1, 1, 1), device="meta"), small, None, None,
                    geom)
    assert not common.needs_int64(call)
    call.x = big
    assert common.needs_int64(call)


def test_smem_rule_rejects_oversized_tiles_on_h100():
    h100 = lookup("h100")
    geom = G(n=64, c=512, k=512, h=28, w=28, r=3, s=3, pad=(0, 1, 1), dtype="float32")
    fam = registry.family("implicit_gemm")
    big = Config(BLOCK_M=256, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=4)
    assert "shared memory" in fam.feasible(geom, big, h100)


def test_config_text_round_trip_and_errors():
    cfg = Config(BLOCK_M=64, BLOCK_N=32, num_warps=4)
    assert Config.parse(str(cfg)) == cfg
    cand = Candidate("pointwise", cfg)
    assert Candidate.parse(cand.id) == cand
    with pytest.raises(ValueError, match="unknown config key"):
        Config(BLOCK_Q=3)
    with pytest.raises(ValueError, match="malformed"):
        Config.parse("BLOCK_M=x")
    with pytest.raises(ValueError, match="family:config"):
        Candidate.parse("nocolon")
