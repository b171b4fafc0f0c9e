"""Gradient kernels (dgrad, wgrad) and autograd under the Triton interpreter.

Kernels are compared with torch's ``convolution_backward`` in float64 on fresh random
tensors, into NaN-poisoned outputs; autograd is checked with ``gradcheck`` in float64.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings

import pytest
import torch
import torch.nn.functional as F
from convdispatch import conv2d, conv3d, force
from convdispatch.dispatcher import CACHE, Conv2d, clear_cache, registry
from convdispatch.dispatcher.autograd import torch_grad
from convdispatch.dispatcher.launch import run_grad_candidate
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.common import cdiv
from convdispatch.kernels.device import INTERPRETER
from convdispatch.kernels.geometry import ConvGeometry
from helpers import rel_err

G = functools.partial(ConvGeometry, dtype="float32")
# The families the interpreter runs (a Gluon family is compiled and checked on the GPU
# instead: tests/test_halo_wgrad.py, tests/test_gpu_grad.py).
GRAD_FAMILIES = [f.name for f in registry.families("dgrad") + registry.families("wgrad")
                 if f.interpreted]

# (family, geometry): each family's own paths (stride phases, dilation, groups, 3D,
# asymmetric padding, contiguous layout, odd channel counts).
CASES = [
    ("dgrad_gemm", G(n=2, c=16, k=24, h=6, w=7, r=3, s=3, pad=(0, 1, 1))),
    ("dgrad_gemm", G(n=2, c=20, k=16, h=9, w=8, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1))),
    ("dgrad_gemm", G(n=1, c=16, k=16, h=11, w=10, r=5, s=3, stride=(1, 3, 2),
                     dilation=(1, 2, 3), pad=(0, 2, 1), layout="contiguous")),
    ("dgrad_gemm", G(n=1, c=32, k=32, g=2, h=7, w=7, r=1, s=1, stride=(1, 2, 2))),
    ("dgrad_gemm", G(n=1, c=16, k=16, d=4, h=5, w=5, t=3, r=3, s=3, stride=(2, 1, 1),
                     pad=(1, 1, 1), dims=3)),
    ("dgrad_gemm", G(n=1, c=16, k=16, h=6, w=6, r=4, s=4, pad=(0, 1, 1), pad_hi=(0, 2, 2))),
    ("dgrad_direct", G(n=2, c=24, k=24, g=24, h=7, w=6, r=3, s=3, pad=(0, 1, 1))),
    ("dgrad_direct", G(n=1, c=16, k=32, g=16, h=9, w=9, r=5, s=5, stride=(1, 2, 2),
                       pad=(0, 2, 2), layout="contiguous")),  # multiplier 2
    ("dgrad_direct", G(n=1, c=24, k=12, g=4, h=7, w=7, r=3, s=3, dilation=(1, 2, 2),
                       pad=(0, 2, 2))),  # 6 in / 3 out channels a group
    ("dgrad_direct", G(n=1, c=8, k=8, g=8, d=4, h=5, w=4, t=3, r=3, s=3, stride=(2, 2, 1),
                       pad=(1, 1, 1), dims=3)),
    ("dgrad_packed", G(n=2, c=32, k=32, g=8, h=6, w=7, r=3, s=3, pad=(0, 1, 1))),
    ("dgrad_packed", G(n=1, c=24, k=48, g=6, h=9, w=8, r=3, s=3, stride=(1, 2, 2),
                       pad=(0, 1, 1), layout="contiguous")),  # 4 in / 8 out a group
    ("dgrad_packed", G(n=1, c=40, k=40, g=10, h=7, w=7, r=3, s=3, pad=(0, 1, 1))),  # odd GPT
    ("dgrad_depthwise", G(n=2, c=24, k=24, g=24, h=9, w=11, r=3, s=3, pad=(0, 1, 1))),
    ("dgrad_depthwise", G(n=1, c=16, k=16, g=16, h=8, w=8, r=4, s=4, pad=(0, 1, 1),
                          pad_hi=(0, 2, 2), layout="contiguous")),  # asymmetric 'same'
    ("dgrad_depthwise", G(n=1, c=8, k=8, g=8, d=3, h=5, w=4, t=3, r=3, s=3, pad=(1, 2, 2),
                          dilation=(1, 2, 2), dims=3)),
    # dgrad through the forward kernels (stride 1, or a 1x1 filter at any stride)
    ("dgrad_implicit_gemm", G(n=2, c=16, k=24, h=6, w=7, r=3, s=3, pad=(0, 1, 1),
                              layout="channels_last")),
    ("dgrad_implicit_gemm", G(n=1, c=16, k=32, h=9, w=8, r=3, s=5, pad=(0, 2, 1),
                              dilation=(1, 2, 1), layout="contiguous")),
    ("dgrad_implicit_gemm", G(n=1, c=16, k=16, h=6, w=6, r=4, s=4, pad=(0, 1, 1),
                              pad_hi=(0, 2, 2))),
    ("dgrad_implicit_gemm", G(n=1, c=16, k=16, d=4, h=5, w=5, t=3, r=3, s=3, pad=(1, 1, 1),
                              dims=3)),
    ("dgrad_implicit_gemm", G(n=1, c=32, k=16, h=9, w=7, r=1, s=1, stride=(1, 2, 2))),
    # stride phases: a stride-1 forward conv of dY a phase, into a strided view of dX
    ("dgrad_implicit_gemm", G(n=2, c=16, k=24, h=8, w=7, r=3, s=3, stride=(1, 2, 2),
                              pad=(0, 1, 1), layout="channels_last")),
    ("dgrad_implicit_gemm", G(n=1, c=16, k=16, h=11, w=10, r=5, s=3, stride=(1, 3, 2),
                              dilation=(1, 2, 3), pad=(0, 2, 1), layout="contiguous")),
    ("dgrad_implicit_gemm", G(n=1, c=16, k=16, h=9, w=9, r=2, s=2,
                              stride=(1, 3, 3))),  # unreached phases: zero
    ("dgrad_implicit_gemm", G(n=1, c=16, k=16, h=10, w=10, r=3, s=3, stride=(1, 2, 2),
                              pad_hi=(0, 1, 1))),  # SD-VAE's downsampling pad
    ("dgrad_implicit_gemm", G(n=1, c=16, k=16, d=5, h=5, w=5, t=3, r=3, s=3,
                              stride=(2, 2, 2), pad=(1, 1, 1), dims=3)),
    ("dgrad_grouped_packed", G(n=1, c=32, k=32, g=4, h=8, w=8, r=3, s=3, stride=(1, 2, 2),
                               pad=(0, 1, 1), layout="channels_last")),
    ("dgrad_depthwise", G(n=1, c=8, k=8, g=8, h=9, w=9, r=3, s=3, stride=(1, 2, 2),
                          pad=(0, 1, 1))),
    ("dgrad_splitk", G(n=1, c=64, k=64, h=4, w=4, r=3, s=3, pad=(0, 1, 1))),
    ("dgrad_pointwise", G(n=2, c=32, k=48, h=5, w=6, r=1, s=1, layout="channels_last")),
    ("dgrad_pointwise", G(n=2, c=32, k=48, h=9, w=7, r=1, s=1, stride=(1, 2, 2))),
    ("dgrad_pointwise", G(n=1, c=16, k=32, d=5, h=4, w=6, r=1, s=1, stride=(2, 1, 3),
                          dims=3)),
    ("dgrad_pointwise_tma", G(n=2, c=64, k=48, h=5, w=6, r=1, s=1, dtype="float16",
                              layout="channels_last")),
    ("dgrad_implicit_gemm_tma", G(n=2, c=48, k=64, h=7, w=9, r=3, s=3, pad=(0, 1, 1),
                                  dtype="float16", layout="channels_last")),
    ("dgrad_implicit_gemm_tma", G(n=1, c=32, k=32, h=6, w=7, r=3, s=3, pad=(0, 2, 2),
                                  dilation=(1, 2, 2), layout="channels_last")),
    ("dgrad_grouped_packed", G(n=2, c=32, k=32, g=8, h=6, w=7, r=3, s=3, pad=(0, 1, 1),
                               layout="channels_last")),
    ("dgrad_grouped_packed", G(n=1, c=24, k=48, g=6, h=9, w=8, r=3, s=3, pad=(0, 1, 1),
                               layout="contiguous")),  # 4 in / 8 out a group
    ("dgrad_grouped_rows", G(n=2, c=32, k=32, g=8, h=6, w=7, r=3, s=3, pad=(0, 1, 1),
                             layout="channels_last")),
    # the stored filter read in place: 8 in / 4 out a group at a stride; 3D phases
    ("dgrad_grouped_rows", G(n=1, c=48, k=24, g=6, h=9, w=8, r=3, s=3, stride=(1, 2, 2),
                             pad=(0, 1, 1), layout="channels_last")),
    ("dgrad_grouped_packed", G(n=1, c=16, k=32, g=4, d=4, h=5, w=4, t=3, r=3, s=3,
                               stride=(2, 1, 2), pad=(1, 1, 1), dims=3)),
    ("dgrad_depthwise_span", G(n=2, c=24, k=24, g=24, h=9, w=11, r=3, s=3, pad=(0, 1, 1),
                               dtype="float16", layout="channels_last")),
    ("dgrad_depthwise_span", G(n=1, c=40, k=40, g=40, h=8, w=8, r=5, s=5, pad=(0, 2, 2),
                               dtype="bfloat16", layout="channels_last")),
    ("dgrad_stem", G(n=2, c=3, k=8, h=9, w=10, r=7, s=7, stride=(1, 2, 2), pad=(0, 3, 3),
                     layout="channels_last")),
    ("dgrad_stem", G(n=3, c=5, k=20, d=4, h=5, w=6, t=3, r=3, s=3, stride=(2, 1, 1),
                     pad=(1, 1, 1), dims=3, dtype="float16")),
    ("dgrad_stem", G(n=1, c=4, k=16, h=6, w=6, r=4, s=4, pad=(0, 1, 1), pad_hi=(0, 2, 2),
                     dilation=(1, 2, 1), layout="channels_last")),
    ("dgrad_stem", G(n=1, c=2, k=8, h=9, w=9, r=2, s=2, stride=(1, 3, 3))),  # unreached rows
    ("wgrad_gemm", G(n=2, c=16, k=24, h=6, w=7, r=3, s=3, pad=(0, 1, 1))),
    ("wgrad_gemm", G(n=3, c=20, k=16, h=9, w=8, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1),
                     layout="contiguous")),
    ("wgrad_gemm", G(n=1, c=32, k=32, g=4, h=8, w=8, r=3, s=3, dilation=(1, 2, 2),
                     pad=(0, 2, 2))),
    ("wgrad_gemm", G(n=1, c=16, k=16, d=4, h=5, w=5, t=3, r=3, s=3, pad=(1, 1, 1), dims=3)),
    ("wgrad_gemm", G(n=1, c=16, k=16, h=6, w=6, r=4, s=4, pad=(0, 1, 1), pad_hi=(0, 2, 2))),
    ("wgrad_pointwise_tma", G(n=2, c=64, k=48, h=5, w=6, r=1, s=1, dtype="float16",
                              layout="channels_last")),
    ("wgrad_pointwise_tma", G(n=1, c=16, k=32, d=3, h=4, w=5, r=1, s=1, dims=3,
                              dtype="bfloat16", layout="channels_last")),
    ("wgrad_implicit_gemm_tma", G(n=2, c=48, k=64, h=7, w=9, r=3, s=3, pad=(0, 1, 1),
                                  dtype="float16", layout="channels_last")),
    ("wgrad_implicit_gemm_tma", G(n=1, c=32, k=16, h=6, w=7, r=4, s=4, pad=(0, 1, 1),
                                  pad_hi=(0, 2, 2), dilation=(1, 1, 2),
                                  layout="channels_last")),
    ("wgrad_implicit_gemm_tma", G(n=1, c=16, k=32, d=3, h=4, w=5, t=3, r=3, s=3,
                                  pad=(1, 1, 1), dims=3, dtype="bfloat16",
                                  layout="channels_last")),
    ("wgrad_packed", G(n=2, c=32, k=32, g=8, h=6, w=7, r=3, s=3, pad=(0, 1, 1))),
    ("wgrad_packed", G(n=1, c=24, k=48, g=6, h=9, w=8, r=3, s=3, stride=(1, 2, 2),
                       pad=(0, 1, 1), layout="contiguous")),
    ("wgrad_packed", G(n=1, c=40, k=40, g=10, h=7, w=7, r=3, s=3, pad=(0, 1, 1))),
    ("wgrad_direct", G(n=2, c=24, k=24, g=24, h=7, w=6, r=3, s=3, pad=(0, 1, 1))),
    ("wgrad_direct", G(n=1, c=16, k=32, g=16, h=9, w=9, r=5, s=5, stride=(1, 2, 2),
                       pad=(0, 2, 2), layout="contiguous")),
    ("wgrad_direct", G(n=2, c=24, k=12, g=4, h=7, w=7, r=3, s=3, dilation=(1, 2, 2),
                       pad=(0, 2, 2))),
    ("wgrad_direct", G(n=1, c=8, k=8, g=8, d=4, h=5, w=4, t=3, r=3, s=3, pad=(1, 1, 1),
                       dims=3)),
    ("wgrad_stem", G(n=2, c=3, k=8, h=9, w=10, r=7, s=7, stride=(1, 2, 2), pad=(0, 3, 3),
                     layout="channels_last")),
    ("wgrad_stem", G(n=1, c=5, k=20, d=4, h=5, w=6, t=3, r=3, s=3, pad=(1, 1, 1), dims=3,
                     dtype="float16")),
    ("wgrad_stem", G(n=1, c=4, k=16, h=6, w=6, r=4, s=4, pad=(0, 1, 1), pad_hi=(0, 2, 2),
                     dilation=(1, 2, 1), layout="channels_last")),
    ("wgrad_depthwise_taps", G(n=2, c=24, k=24, g=24, h=7, w=6, r=3, s=3, pad=(0, 1, 1),
                               layout="channels_last")),
    ("wgrad_depthwise_taps", G(n=1, c=16, k=32, g=16, h=9, w=9, r=5, s=5, stride=(1, 2, 2),
                               pad=(0, 2, 2), layout="contiguous")),  # multiplier 2
    ("wgrad_depthwise_taps", G(n=1, c=8, k=8, g=8, d=4, h=5, w=4, t=3, r=3, s=3,
                               pad=(1, 1, 1), dilation=(1, 2, 1), dims=3, dtype="bfloat16")),
    ("wgrad_depthwise_taps", G(n=1, c=8, k=8, g=8, h=8, w=8, r=7, s=7, pad=(0, 3, 3),
                               layout="channels_last")),  # 49 taps
    ("wgrad_depthwise_rows", G(n=2, c=24, k=24, g=24, h=7, w=6, r=3, s=3, pad=(0, 1, 1),
                               layout="channels_last")),
    ("wgrad_depthwise_rows", G(n=1, c=16, k=32, g=16, h=9, w=9, r=5, s=5, stride=(1, 2, 2),
                               pad=(0, 2, 2), layout="contiguous")),  # multiplier 2
    ("wgrad_depthwise_rows", G(n=1, c=8, k=8, g=8, d=4, h=5, w=4, t=3, r=3, s=3,
                               pad=(1, 1, 1), dilation=(1, 2, 1), dims=3, dtype="bfloat16")),
    ("wgrad_depthwise_rows", G(n=1, c=16, k=16, g=16, h=10, w=9, r=4, s=4, stride=(1, 2, 3),
                               pad=(0, 1, 1), pad_hi=(0, 2, 2), dilation=(1, 2, 1),
                               dtype="float16", layout="channels_last")),
    ("wgrad_depthwise_span", G(n=2, c=24, k=24, g=24, h=7, w=6, r=3, s=3, pad=(0, 1, 1))),
    ("wgrad_depthwise_span", G(n=1, c=16, k=32, g=16, h=9, w=9, r=3, s=3, stride=(1, 2, 2),
                               pad=(0, 1, 1), dtype="bfloat16")),  # multiplier 2
    ("wgrad_depthwise_span", G(n=1, c=16, k=16, g=16, h=10, w=9, r=4, s=4, stride=(1, 2, 3),
                               pad=(0, 1, 1), pad_hi=(0, 2, 2), dilation=(1, 2, 1),
                               dtype="float16")),
    ("wgrad_depthwise_span", G(n=2, c=143, k=143, g=143, h=5, w=12, r=3, s=3,
                               pad=(0, 1, 1))),  # spans starting mid-pixel: the fold
    ("wgrad_grouped_taps", G(n=2, c=32, k=32, g=8, h=6, w=7, r=3, s=3, pad=(0, 1, 1),
                             layout="channels_last")),
    ("wgrad_grouped_taps", G(n=1, c=24, k=48, g=6, h=9, w=8, r=3, s=3, stride=(1, 2, 2),
                             pad=(0, 1, 1), layout="contiguous")),  # 4 in / 8 out a group
    ("wgrad_grouped_taps", G(n=1, c=16, k=16, g=4, d=3, h=4, w=5, t=3, r=3, s=3,
                             pad=(1, 1, 1), dilation=(1, 1, 2), dims=3, dtype="bfloat16")),
    ("wgrad_grouped_taps", G(n=1, c=32, k=32, g=2, h=7, w=9, r=4, s=4, pad=(0, 1, 1),
                             pad_hi=(0, 2, 2), dtype="float16", layout="channels_last")),
    ("wgrad_staged_tma", G(n=2, c=16, k=24, h=6, w=7, r=3, s=3, pad=(0, 1, 1),
                           layout="channels_last")),
    ("wgrad_staged_tma", G(n=3, c=16, k=16, h=9, w=8, r=3, s=3, stride=(1, 2, 2),
                           pad=(0, 1, 1), layout="contiguous")),  # 4 phase images
    ("wgrad_staged_tma", G(n=1, c=16, k=16, h=11, w=10, r=5, s=3, stride=(1, 3, 2),
                           dilation=(1, 2, 3), pad=(0, 2, 1))),
    ("wgrad_staged_tma", G(n=1, c=16, k=16, d=4, h=5, w=5, t=3, r=3, s=3, stride=(2, 1, 1),
                           pad=(1, 1, 1), dims=3, dtype="bfloat16")),
    ("wgrad_staged_tma", G(n=1, c=16, k=16, h=6, w=6, r=4, s=4, pad=(0, 1, 1),
                           pad_hi=(0, 2, 2))),
    ("wgrad_staged_tma", G(n=2, c=32, k=48, h=9, w=7, r=1, s=1, stride=(1, 2, 2))),
    ("wgrad_staged_tma", G(n=2, c=5, k=12, h=9, w=7, r=3, s=3, pad=(0, 1, 1),
                           dtype="float16")),  # rows padded to 16 bytes
    ("wgrad_staged_tma", G(n=2, c=128, k=128, g=4, h=5, w=6, r=3, s=3, stride=(1, 2, 2),
                           pad=(0, 1, 1), dtype="float16", layout="channels_last")),  # packs
]


def grad_tensors(geom: ConvGeometry, seed: int = 0):
    """x, w, dy in the geometry's dtype and layout, fresh random normals."""
    gen = torch.Generator().manual_seed(seed)
    dt = getattr(torch, geom.dtype)
    sp = (geom.d, geom.h, geom.w)[3 - geom.dims:]
    fl = (geom.t, geom.r, geom.s)[3 - geom.dims:]
    osp = geom.out_spatial[3 - geom.dims:]
    x = torch.randn(geom.n, geom.c, *sp, generator=gen).to(dt)
    w = (torch.randn(geom.k, geom.cg, *fl, generator=gen) / geom.gemm_k ** 0.5).to(dt)
    dy = torch.randn(geom.n, geom.k, *osp, generator=gen).to(dt)
    if geom.layout == "channels_last":
        fmt = torch.channels_last if geom.dims == 2 else torch.channels_last_3d
        x, w, dy = (t.to(memory_format=fmt) for t in (x, w, dy))
    return x, w, dy


def grad_ref(geom: ConvGeometry, direction: str, x, w, dy) -> torch.Tensor:
    """float64 torch gradient (padding applied explicitly when asymmetric)."""
    return torch_grad(geom, direction, dy.double(), x.double(), w.double())


def run_family(family: str, cfg: Config, geom, x, w, dy) -> torch.Tensor:
    direction = registry.family(family).direction
    like = x if direction == "dgrad" else w
    out = torch.full_like(like, float("nan"))
    return run_grad_candidate(Candidate(family, cfg), direction, dy, x, w, geom, out=out)


TOL = {"float16": 5e-3, "bfloat16": 3e-2, "float32": 2e-3}  # fp32 follows allow_tf32


def forward_twin(family: str) -> bool:
    """A dgrad family that runs a forward family's kernel (kernels/dgrad_forward.py)."""
    return hasattr(registry.family(family), "forward")


@pytest.mark.parametrize("family,geom", CASES, ids=[f"{f}-{i}" for i, (f, _) in enumerate(CASES)])
def test_family_matches_torch(family, geom):
    x, w, dy = grad_tensors(geom)
    direction = registry.family(family).direction
    ref = grad_ref(geom, direction, x, w, dy)
    cands = [c for c in registry.candidates(geom, INTERPRETER, direction) if c.family == family]
    assert cands, f"{family} offers nothing for {geom.describe()}"
    for cand in (cands[0], cands[-1]):
        out = run_family(family, cand.config, geom, x, w, dy)
        assert rel_err(out, ref) < TOL[geom.dtype], cand.id


def test_every_gradient_family_has_cases():
    assert set(GRAD_FAMILIES) <= {f for f, _ in CASES}


# The family's CASES, a 3x2 filter dilated along H and a 1x3 filter (one filter row).
TAPS_KNOB_CASES = [g for f, g in CASES if f == "wgrad_grouped_taps"] + [
    G(n=1, c=32, k=32, g=2, h=7, w=9, r=3, s=2, pad=(0, 1, 1), dilation=(1, 2, 1),
      dtype="float16", layout="channels_last"),
    G(n=3, c=64, k=64, g=16, h=5, w=12, r=1, s=3, pad=(0, 0, 1), dtype="float16",
      layout="channels_last"),
]


@pytest.mark.parametrize("knobs", [dict(FILTER_ROWS=2), dict(FILTER_ROWS=3)],
                         ids=["rows2", "rows3"])
@pytest.mark.parametrize("case", range(len(TAPS_KNOB_CASES)))
def test_grouped_taps_filter_rows(case, knobs):
    """wgrad_grouped_taps with several filter rows a program (dY read once for them; rows
    past the filter's end masked: 9 rows of a 3D filter in twos, a 1x3 filter's one row)
    across stride, dilation, 3D planes and a 16-channel pack of 4 groups."""
    from convdispatch.dispatcher.launch import launch_grad

    geom = TAPS_KNOB_CASES[case]
    x, w, dy = grad_tensors(geom, seed=case)
    ref = grad_ref(geom, "wgrad", x, w, dy)
    for bn, rows, tw, split in ((16, 4, 8, 1), (32, 2, 8, 8)):
        cfg = Config(BLOCK_M=rows * tw, TILE_W=tw, BLOCK_N=bn, SPLIT_K=split, **knobs,
                     num_warps=4, num_stages=2)
        out = torch.full_like(w, float("nan"))
        launch_grad(Candidate("wgrad_grouped_taps", cfg), geom, dy, x=x, w=w, out=out)
        assert rel_err(out, ref) < TOL[geom.dtype], cfg


@pytest.mark.parametrize("geom", [
    G(n=1, c=64, k=64, g=4, d=2, h=4, w=4, t=3, r=3, s=3, pad=(1, 1, 1), dims=3,
      layout="channels_last"),
    G(n=2, c=32, k=64, g=4, h=5, w=6, r=3, s=3, pad=(0, 1, 1), layout="channels_last"),
], ids=["3d", "2d-k-not-c"])
def test_dgrad_grouped_packed_split(geom):
    """The dgrad twin of grouped_packed splits its (tap, channel block) steps like the
    forward kernel (few tiles: ResNeXt3D-50 at batch 1): float32 slices added in a fixed
    order by splitk's pass (same bits twice), equal to torch's dX."""
    fam = registry.family("dgrad_grouped_packed")
    cands = [c for c in fam.candidates(geom, INTERPRETER) if c.config.get("SPLIT_K", 1) > 1]
    assert cands, "no split config offered"
    x, w, dy = grad_tensors(geom, seed=7)
    ref = grad_ref(geom, "dgrad", x, w, dy)
    cfg = cands[0].config
    a = run_family(fam.name, cfg, geom, x, w, dy)
    b = run_family(fam.name, cfg, geom, x, w, dy)
    assert torch.equal(a, b) and rel_err(a, ref) < TOL["float32"], cfg


@pytest.mark.parametrize("family,taps", [("wgrad_pointwise_tma", 1),
                                         ("wgrad_implicit_gemm_tma", 3)])
def test_wgrad_tma_split_and_unaligned_fallback(family, taps):
    """SPLIT_K > 1 adds float32 slices in a fixed order (same bits twice); a view whose
    rows break TMA's 16-byte rule runs the pointer kernel with the same tile."""
    fam = registry.family(family)
    geom = G(n=4, c=32, k=32, h=8, w=8, r=taps, s=taps, pad=(0, taps // 2, taps // 2),
             layout="channels_last")
    x, w, dy = grad_tensors(geom, seed=4)
    ref = grad_ref(geom, "wgrad", x, w, dy)
    cfg = next(c for c in fam.configs if c["SPLIT_K"] == 4 and c["BLOCK_M"] == 64
               and c["BLOCK_N"] == 64)
    a = run_family(fam.name, cfg, geom, x, w, dy)
    b = run_family(fam.name, cfg, geom, x, w, dy)
    assert torch.equal(a, b) and rel_err(a, ref) < TOL["float32"]
    big = torch.randn(4, 33, 8, 8).to(memory_format=torch.channels_last)
    x_odd = big[:, 1:]  # 33-channel rows: not a dense [pixels, 32] matrix
    x_odd.copy_(x)
    out = run_family(fam.name, cfg, geom, x_odd, w, dy)
    assert rel_err(out, ref) < TOL["float32"]


@pytest.mark.parametrize("layout", ["channels_last", "contiguous"])
def test_dgrad_stem_chunks_images(layout, monkeypatch):
    """A column workspace too small for the batch: images run in chunks (here 2 + 2 + 1),
    each chunk's input rows written once, whatever dY's layout."""
    from convdispatch.kernels import dgrad_stem

    geom = G(n=5, c=3, k=8, h=9, w=10, r=5, s=5, stride=(1, 2, 2), pad=(0, 2, 2),
             layout=layout)
    per_image = 5 * 5 * dgrad_stem.col_stride(geom) * 4
    monkeypatch.setattr(dgrad_stem, "MAX_COL_BYTES", 2 * per_image)
    assert dgrad_stem.chunk_images(geom) == 2
    x, w, dy = grad_tensors(geom, seed=5)
    cfg = registry.family("dgrad_stem").configs[0]
    out = run_family("dgrad_stem", cfg, geom, x, w, dy)
    assert rel_err(out, grad_ref(geom, "dgrad", x, w, dy)) < TOL["float32"]


def small_geometry(family: str, dtype: str, r: int = 3) -> ConvGeometry:
    """A tiny geometry ``family`` runs: strided first (the stride-phase paths), then stride
    1 (the forward twins), ungrouped, grouped (4 or 8 channels a group) or depthwise;
    unpadded first."""
    fam = registry.family(family)
    for pad in (r // 2, 1):  # a padded 1x1 last (families that leave the plain 1x1 to TMA)
        for c, g, st in ((16, 1, 2), (16, 4, 2), (16, 2, 2), (16, 16, 2), (16, 1, 1),
                         (16, 4, 1), (16, 2, 1), (16, 16, 1), (64, 1, 1), (3, 1, 2)):
            geom = ConvGeometry(n=2, c=c, k=c, g=g, h=6, w=5, r=r, s=r, stride=(1, st, st),
                                pad=(0, pad, pad), dtype=dtype)
            if fam.candidates(geom, INTERPRETER):
                return geom
    raise AssertionError(f"no small geometry for {family} in {dtype}")


@pytest.mark.parametrize("dtype,tol", [("float16", 5e-3), ("bfloat16", 3e-2), ("float64", 1e-12)])
@pytest.mark.parametrize("family", GRAD_FAMILIES)
def test_family_dtypes(family, dtype, tol):
    if dtype not in registry.family(family).dtypes:
        pytest.skip(f"{family} has no {dtype} kernel")
    geom = small_geometry(family, dtype, r=1 if "pointwise" in family else 3)
    x, w, dy = grad_tensors(geom, seed=1)
    direction = registry.family(family).direction
    cand = next(c for c in registry.candidates(geom, INTERPRETER, direction)
                if c.family == family)
    out = run_family(family, cand.config, geom, x, w, dy)
    assert out.dtype == getattr(torch, dtype)
    assert rel_err(out, grad_ref(geom, direction, x, w, dy)) < tol


@pytest.mark.parametrize("family", GRAD_FAMILIES)
def test_every_config_runs(family):
    """Each config of the family's space, launched once on a tiny shape, is right."""
    fam = registry.family(family)
    if forward_twin(family):
        pytest.skip("the forward family's test_every_config_runs runs each config; the twin "
                    "adds a config-independent filter transform (CASES)")
    # wgrad launches a program per (tile, tap, split): a 1x1 filter keeps SPLIT_K=128 cheap
    # under the interpreter.
    geom = small_geometry(family, "float32", r=3 if fam.direction == "dgrad" else 1)
    x, w, dy = grad_tensors(geom, seed=2)
    ref = grad_ref(geom, fam.direction, x, w, dy)
    with torch.backends.cudnn.flags(allow_tf32=False):
        for cfg in fam.configs:
            assert fam.runnable(geom, cfg, INTERPRETER) is None, cfg
            out = run_family(family, cfg, geom, x, w, dy)
            assert rel_err(out, ref) < 1e-5, str(cfg)


@pytest.mark.parametrize("geom,cfg", [
    # multiplier 2 over 7 spans starting mid-pixel, 4 splits of 3, 3, 3 and 1 items, the
    # next item's window loaded ahead (num_stages=2)
    (G(n=2, c=24, k=48, g=24, h=10, w=7, r=3, s=3, stride=(1, 2, 1), pad=(0, 1, 1),
       layout="channels_last"),
     Config(BLOCK_M=1, BLOCK_N=256, SPLIT_K=4, num_warps=2, num_stages=2)),
    # more channels than a span holds (2100 > 2048: a span is part of a pixel), splits of
    # 2, 2, 2 and 1 items
    (G(n=1, c=2100, k=2100, g=2100, h=7, w=2, r=3, s=1, pad=(0, 1, 0),
       layout="channels_last"),
     Config(BLOCK_M=1, BLOCK_N=2048, SPLIT_K=4, num_warps=8, num_stages=1)),
], ids=["mult2-spans-split-prefetch", "k-over-span"])
def test_depthwise_span_wgrad_spans_and_splits(geom, cfg):
    """wgrad_depthwise_span where several spans and splits meet (each span and split a
    slice of the fixed-order reduction), against float64 torch."""
    from convdispatch.kernels.wgrad_depthwise_span import span_layout

    spans, _, items = span_layout(geom, cfg["BLOCK_M"], cfg["BLOCK_N"])
    assert spans > 1 and items > cfg["SPLIT_K"]
    x, w, dy = grad_tensors(geom, seed=5)
    with torch.backends.cudnn.flags(allow_tf32=False):
        out = run_family("wgrad_depthwise_span", cfg, geom, x, w, dy)
    assert rel_err(out, grad_ref(geom, "wgrad", x, w, dy)) < 1e-5


@pytest.mark.parametrize("family", ["wgrad_gemm", "wgrad_direct", "wgrad_stem",
                                    "wgrad_depthwise_taps", "wgrad_depthwise_rows",
                                    "wgrad_depthwise_span", "wgrad_grouped_taps",
                                    "wgrad_staged_tma"])
def test_split_reduction_is_deterministic(family):
    fam = registry.family(family)
    g = {"wgrad_direct": 8, "wgrad_grouped_taps": 4}.get(
        family, 16 if family.startswith("wgrad_depthwise") else 1)
    c = 3 if family == "wgrad_stem" else 16
    geom = G(n=4, c=c, k=16, g=g, h=8, w=8, r=3, s=3, pad=(0, 1, 1))
    x, w, dy = grad_tensors(geom, seed=3)
    split = min((c for c in fam.configs if c["SPLIT_K"] > 1),
                key=lambda c: (c["SPLIT_K"], c["BLOCK_M"] * c["BLOCK_N"], str(c)))
    steps = fam.grid(geom, split).k_steps
    assert cdiv(steps, cdiv(steps, split["SPLIT_K"])) > 1, "the launch would not split"
    a = run_family(family, split, geom, x, w, dy)
    b = run_family(family, split, geom, x, w, dy)
    assert torch.equal(a, b)
    assert rel_err(a, grad_ref(geom, "wgrad", x, w, dy)) < 2e-3


def _gradcheck(fn, *inputs):
    clear_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float64 forward runs on torch (no forward kernel)
        assert torch.autograd.gradcheck(fn, inputs, fast_mode=True)
    directions = {key[-1] for key, _ in CACHE.items()}
    assert {"dgrad", "wgrad"} <= directions, "gradients did not go through the kernels"


def _leaf(*shape, scale=1.0):
    return (torch.randn(*shape, dtype=torch.float64) * scale).requires_grad_()


@pytest.mark.parametrize("activation", [None, "relu", "relu6", "gelu", "silu"])
def test_gradcheck_epilogue(activation):
    torch.manual_seed(0)
    x, w, b = _leaf(2, 8, 5, 5), _leaf(8, 4, 3, 3, scale=3.0), _leaf(8)
    res = _leaf(2, 8, 3, 3)
    _gradcheck(lambda x, w, b, r: conv2d(x, w, b, 2, 1, 1, 2, activation=activation,
                                         residual=r), x, w, b, res)


@pytest.mark.parametrize("kw", [
    dict(stride=1, padding=1, dilation=1, groups=1),
    dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=1),
    dict(stride=2, padding=2, dilation=2, groups=8),  # depthwise
    dict(stride=1, padding="same", dilation=1, groups=2),  # asymmetric for the 4x4 filter
], ids=["plain", "strided-dilated", "depthwise", "same"])
def test_gradcheck_geometry(kw):
    torch.manual_seed(1)
    g = kw["groups"]
    r = 4 if kw["padding"] == "same" else 3
    x, w = _leaf(2, 8, 6, 7), _leaf(8, 8 // g, r, r)
    _gradcheck(lambda x, w: conv2d(x, w, None, **kw), x, w)


def test_gradcheck_conv3d_and_unbatched_channels_last():
    torch.manual_seed(2)
    x, w = _leaf(4, 4, 5, 5), _leaf(8, 4, 2, 3, 3)
    _gradcheck(lambda x, w: conv3d(x, w, padding=(0, 1, 1), stride=(1, 2, 1)), x, w)
    xl = torch.randn(2, 8, 5, 5, dtype=torch.float64).to(memory_format=torch.channels_last)
    xl.requires_grad_()
    w2 = _leaf(4, 8, 3, 3)
    _gradcheck(lambda x, w: conv2d(x, w, padding=1), xl, w2)
    u = _leaf(8, 5, 5)
    _gradcheck(lambda u, w: conv2d(u, w, padding=1), u, w2)


def test_module_trains_like_torch():
    torch.manual_seed(3)
    ref = torch.nn.Conv2d(8, 16, 3, padding=1, groups=2)
    ours = Conv2d(8, 16, 3, padding=1, groups=2)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(2, 8, 6, 6).to(memory_format=torch.channels_last)
    gy = torch.randn(2, 16, 6, 6)
    with torch.backends.cudnn.flags(allow_tf32=False):
        ref(x).backward(gy)
        ours(x).backward(gy)
    for (name, p), q in zip(ours.named_parameters(), ref.parameters()):
        assert p.grad is not None and rel_err(p.grad, q.grad.double()) < 1e-5, name


def test_input_gradient_keeps_layout_and_dtype():
    x = torch.randn(2, 16, 6, 6, dtype=torch.float16).to(memory_format=torch.channels_last)
    x.requires_grad_()
    w = torch.randn(16, 16, 3, 3, dtype=torch.float16, requires_grad=True)
    conv2d(x, w, padding=1).float().sum().backward()
    assert x.grad.dtype == torch.float16 and w.grad.dtype == torch.float16
    assert x.grad.is_contiguous(memory_format=torch.channels_last)
    xd, wd = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    F.conv2d(xd, wd, padding=1).sum().backward()
    assert rel_err(x.grad, xd.grad) < 5e-3 and rel_err(w.grad, wd.grad) < 5e-3


def test_force_applies_to_its_direction_only():
    geom = G(n=1, c=16, k=16, h=5, w=5, r=3, s=3, pad=(0, 1, 1))
    cand = [c for c in registry.candidates(geom, INTERPRETER, "wgrad")
            if c.config.get("SPLIT_K") == 1][0]
    x = torch.randn(1, 16, 5, 5, requires_grad=True)
    w = torch.randn(16, 16, 3, 3, requires_grad=True)
    clear_cache()
    with force(cand):
        conv2d(x, w, padding=1).sum().backward()
    keys = {key[-1] for key, _ in CACHE.items()}
    assert "dgrad" in keys and "forward" in keys and "wgrad" not in keys


def test_bad_direction_and_mismatched_candidate():
    with pytest.raises(ValueError, match="direction"):
        registry.families("sideways")
    geom = G(n=1, c=16, k=16, h=5, w=5, r=3, s=3, pad=(0, 1, 1))
    cand = registry.candidates(geom, INTERPRETER, "dgrad")[0]
    x, w, dy = grad_tensors(geom)
    with pytest.raises(ValueError, match="computes dgrad, not wgrad"):
        run_grad_candidate(cand, "wgrad", dy, x, w, geom)
    fwd = registry.candidates(geom, INTERPRETER)[0]
    with pytest.raises(ValueError, match="computes forward"):
        run_grad_candidate(fwd, "dgrad", dy, x, w, geom)


def test_forward_twins_need_a_forward_equivalent():
    fam = registry.family("dgrad_depthwise")
    strided = G(n=1, c=8, k=8, g=8, h=6, w=6, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1))
    assert fam.rejects(strided) is None  # by stride phases
    assert "depthwise" in fam.rejects(G(n=1, c=8, k=16, g=8, h=6, w=6, r=3, s=3))
    assert fam.rejects(G(n=1, c=8, k=8, g=8, h=6, w=6, r=3, s=3, dtype="float64"))
    dense = registry.family("dgrad_implicit_gemm")
    assert dense.rejects(G(n=1, c=16, k=16, h=6, w=6, r=3, s=3, stride=(1, 2, 2))) is None
    assert dense.rejects(G(n=1, c=16, k=16, h=6, w=6, r=1, s=1, stride=(1, 2, 2))) is None
    # padding past the filter's reach has no forward equivalent (negative padding), at
    # stride 1 or in a stride phase
    assert "padding" in dense.rejects(G(n=1, c=16, k=16, h=6, w=6, r=3, s=3, pad=(0, 3, 3)))
    assert "padding" in dense.rejects(G(n=1, c=16, k=16, h=8, w=8, r=3, s=3,
                                        stride=(1, 2, 2), pad=(0, 3, 3)))
    tma = registry.family("dgrad_implicit_gemm_tma")
    assert "stride phases" in tma.rejects(G(n=1, c=32, k=32, h=8, w=8, r=3, s=3,
                                             stride=(1, 2, 2), pad=(0, 1, 1),
                                             dtype="float16", layout="channels_last"))
    assert "ungrouped" in dense.rejects(G(n=1, c=16, k=16, g=2, h=6, w=6, r=3, s=3))
    plain = G(n=1, c=16, k=16, h=6, w=6, r=3, s=3)
    assert "not a grouped" in registry.family("dgrad_grouped_packed").rejects(plain)


def test_stride_phases():
    """A 3x3 filter at stride 2, padding 1: dX's phases are reached by 1x1, 1x2, 2x1 and
    2x2 taps, as stride-1 convolutions of dY with padding on the high side only; a 2x2
    filter at stride 3 reaches two of three phases an axis (the rest is zeroed)."""
    from convdispatch.kernels.dgrad_forward import phase_problems, unreached_phases

    phases = phase_problems(G(n=1, c=16, k=8, h=28, w=28, r=3, s=3, stride=(1, 2, 2),
                              pad=(0, 1, 1)))
    assert [p.offset for p in phases] == [(0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1)]
    assert [(p.geom.r, p.geom.s) for p in phases] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert [p.first_tap[1:] for p in phases] == [(1, 1), (1, 0), (0, 1), (0, 0)]
    assert all(p.tap_step == (1, 2, 2) for p in phases)
    assert phases[3].geom.pad == (0, 0, 0) and phases[3].geom.pads_hi == (0, 1, 1)
    assert (phases[3].geom.c, phases[3].geom.k, phases[3].geom.out_spatial) == (8, 16,
                                                                              (1, 14, 14))
    sparse = phase_problems(G(n=1, c=16, k=16, h=9, w=9, r=2, s=2, stride=(1, 3, 3)))
    assert sum(p.geom is not None for p in sparse) == 4
    assert unreached_phases(sparse) == (0, 0b100, 0b100)
    assert phase_problems(G(n=1, c=16, k=16, h=9, w=9, r=3, s=3)) is None  # stride 1
    # a 1x1 filter without padding reaches only phase 0, its stride lattice
    from convdispatch.kernels.dgrad_forward import lattice_geometry

    pw = G(n=1, c=16, k=32, h=9, w=9, r=1, s=1, stride=(1, 2, 2))
    lattice = phase_problems(pw)
    assert [p.offset for p in lattice if p.geom is not None] == [(0, 0, 0)]
    assert unreached_phases(lattice) == (0, 0b10, 0b10)
    assert lattice[0].geom.key() == dataclasses.replace(lattice_geometry(pw),
                                                        pad_hi=(0, 0, 0)).key()


def test_forward_twin_reads_dy_in_any_layout():
    """dY in another memory format than the geometry's (autograd can hand one over) is
    copied into the forward kernel's layout, not read with the wrong tile assumptions."""
    geom = G(n=2, c=16, k=24, h=6, w=7, r=3, s=3, pad=(0, 1, 1), layout="channels_last")
    x, w, dy = grad_tensors(geom)
    dy = dy.contiguous()
    cand = next(c for c in registry.candidates(geom, INTERPRETER, "dgrad")
                if c.family == "dgrad_implicit_gemm")
    out = run_family(cand.family, cand.config, geom, x, w, dy)
    assert rel_err(out, grad_ref(geom, "dgrad", x, w, dy)) < TOL["float32"]


def test_dgrad_rule_runs_the_forward_rule_on_dy():
    from convdispatch.dispatcher.choosers import grad_families
    from convdispatch.kernels.device import lookup

    h100 = lookup("h100")
    dense = ConvGeometry(n=8, c=64, k=64, h=28, w=28, r=3, s=3, pad=(0, 1, 1))
    assert grad_families(dense, "dgrad", h100)[0][:2] == ["dgrad_implicit_gemm_tma",
                                                         "dgrad_implicit_gemm"]
    plain = dataclasses.replace(dense, layout="contiguous")
    assert grad_families(plain, "dgrad", h100)[0][0] == "dgrad_implicit_gemm"
    pw = ConvGeometry(n=8, c=256, k=512, h=28, w=28, r=1, s=1)
    assert grad_families(pw, "dgrad", h100)[0][0] == "dgrad_pointwise_tma"
    strided = ConvGeometry(n=8, c=256, k=512, h=28, w=28, r=1, s=1, stride=(1, 2, 2))
    assert grad_families(strided, "dgrad", h100)[0][0] == "dgrad_pointwise"
    s2 = ConvGeometry(n=8, c=64, k=64, h=28, w=28, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1))
    assert grad_families(s2, "dgrad", h100)[0][0] == "dgrad_gemm"
    assert grad_families(dense, "wgrad", h100)[0][0] == "wgrad_implicit_gemm_tma"  # 28 wide
    narrow = dataclasses.replace(dense, h=14, w=14)
    assert grad_families(narrow, "wgrad", h100)[0][0] == "wgrad_gemm"
    assert grad_families(plain, "wgrad", h100)[0][0] == "wgrad_gemm"


def test_depthwise_wgrad_rule_takes_spans_for_large_dy():
    """The rule chooser puts wgrad_depthwise_span first from SPAN_WGRAD_MIN_DY elements of
    dY in 16-bit dtypes (2D channels_last, where the family runs), and the rows family
    below that or where spans do not apply."""
    from convdispatch.dispatcher.choosers import SPAN_WGRAD_MIN_DY, grad_families
    from convdispatch.kernels.device import lookup

    h100 = lookup("h100")
    big = ConvGeometry(n=32, c=144, k=144, g=144, h=56, w=56, r=3, s=3, pad=(0, 1, 1),
                       layout="channels_last")  # MobileNetV2 features.3 at batch 32
    assert big.gemm_m * big.k >= SPAN_WGRAD_MIN_DY
    assert grad_families(big, "wgrad", h100)[0][:2] == ["wgrad_depthwise_span",
                                                       "wgrad_depthwise_rows"]
    small = dataclasses.replace(big, n=1, h=14, w=14)
    assert small.gemm_m * small.k < SPAN_WGRAD_MIN_DY
    assert grad_families(small, "wgrad", h100)[0][0] == "wgrad_depthwise_rows"
    assert grad_families(dataclasses.replace(big, dtype="bfloat16"), "wgrad",
                         h100)[0][0] == "wgrad_depthwise_span"
    for other in (dataclasses.replace(big, layout="contiguous"),
                  dataclasses.replace(big, dtype="float32"),  # spans swept in 16 bits only
                  dataclasses.replace(big, d=4, t=3, pad=(1, 1, 1), dims=3)):
        assert grad_families(other, "wgrad", h100)[0][0] == "wgrad_depthwise_rows"
    from convdispatch import explain

    rule = explain(big, gpu="h100", chooser="rule", direction="wgrad")
    assert rule.candidate.family == "wgrad_depthwise_span"


def test_forward_families_refuse_float64():
    geom = ConvGeometry(n=1, c=16, k=16, h=5, w=5, r=3, s=3, dtype="float64")
    assert registry.candidates(geom, INTERPRETER) == []
    assert registry.candidates(geom, INTERPRETER, "dgrad")
    from convdispatch.kernels.device import lookup

    assert registry.candidates(geom, lookup("h100"), "dgrad") == []  # GPU: torch does it


def test_explain_gradient_directions_for_h100():
    from convdispatch import explain

    geom = ConvGeometry(n=32, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1))
    for direction in ("dgrad", "wgrad"):
        e = explain(geom, gpu="h100", chooser="rule", direction=direction)
        assert e.candidate.family.startswith(direction) and e.ranked
        assert all(registry.direction_of(c) == direction for c, _ in e.ranked)
    with pytest.raises(ValueError, match="direction"):
        explain(geom, gpu="h100", direction="both")


class _PickForReplay:
    """A chooser for the replay test: dgrad_depthwise, dgrad_implicit_gemm or
    dgrad_grouped_packed (a stride phase's taps a flipped view of the stored filter), the
    first of them offered (unsplit); wgrad_gemm's smallest split-K config for dense
    wgrad (feasible or not: a decision is what the chooser says); else the first
    candidate."""

    name, identity = "pick-for-replay", "pick-for-replay"

    def choose(self, geom, cands, device):
        from convdispatch.dispatcher.decision import Decision

        liked = ("dgrad_depthwise", "dgrad_implicit_gemm", "dgrad_grouped_packed")
        pick = min(cands, key=lambda c: liked.index(c.family) if c.family in liked else 9)
        if pick.family == "dgrad_grouped_packed" and pick.config.get("SPLIT_K", 1) > 1:
            # the interpreter's 4 "SMs" leave only split configs: run the tile unsplit
            pick = Candidate(pick.family, Config(**{k: v for k, v in pick.config.items()
                                                    if k != "SPLIT_K"}))
        if pick.family.startswith("wgrad") and geom.g == 1:
            fam = registry.family("wgrad_gemm")
            cfg = min((c for c in fam.configs if c["SPLIT_K"] > 1),
                      key=lambda c: (c["SPLIT_K"], c["BLOCK_M"] * c["BLOCK_N"], str(c)))
            pick = Candidate("wgrad_gemm", cfg)
        return Decision(pick, "test", self.name)


@pytest.mark.parametrize("case", ["dense", "wgrad_split", "depthwise_s1", "dense_s2",
                                  "grouped_s2"])
def test_repeat_gradient_calls_replay_the_recorded_launches(case, monkeypatch):
    """The second gradient call of a signature replays the first one's launches (no
    decision, scratch such as split workspaces made afresh, views of the inputs such as
    dgrad_depthwise's reversed filter taken of the new call's tensors) and computes what
    torch does."""
    from convdispatch.dispatcher import api, set_chooser
    from convdispatch.dispatcher import autograd as A

    geom = {
        "dense": ConvGeometry(n=2, c=8, k=8, h=6, w=5, r=3, s=3, pad=(0, 1, 1),
                              dtype="float32", layout="contiguous"),
        "wgrad_split": ConvGeometry(n=4, c=16, k=16, h=8, w=8, r=3, s=3, pad=(0, 1, 1),
                                    dtype="float32", layout="contiguous"),
        "depthwise_s1": ConvGeometry(n=2, c=4, k=4, g=4, h=6, w=6, r=3, s=3, pad=(0, 1, 1),
                                     dtype="float32", layout="contiguous"),
        "dense_s2": ConvGeometry(n=2, c=8, k=8, h=6, w=5, r=3, s=3, stride=(1, 2, 2),
                                 pad=(0, 1, 1), dtype="float32", layout="contiguous"),
        "grouped_s2": ConvGeometry(n=2, c=16, k=16, g=4, h=7, w=6, r=3, s=3,
                                   stride=(1, 2, 2), pad=(0, 1, 1), dtype="float32",
                                   layout="channels_last"),
    }[case]
    clear_cache()
    set_chooser(_PickForReplay())
    try:
        for direction in ("dgrad", "wgrad"):
            x1, w1, dy1 = grad_tensors(geom, seed=1)
            first = A.gradient(geom, direction, dy1, x1, w1)
            assert rel_err(first, torch_grad(geom, direction, dy1.double(), x1.double(),
                                             w1.double())) < 1e-5
            keys = [k for k in api.GRAD_PLANS if k[0] == direction]
            assert len(keys) == 1
            plan = api.GRAD_PLANS[keys[0]]
            assert plan is not None
            if case == "wgrad_split" and direction == "wgrad":
                assert plan.scratch, "the split workspace is allocated per replay"
            if case == "dense" and direction == "dgrad":  # the twin reads w in place
                assert api.decide(geom, INTERPRETER, direction="dgrad").candidate.family \
                    == "dgrad_implicit_gemm"
            if case == "grouped_s2" and direction == "dgrad":
                assert api.decide(geom, INTERPRETER, direction="dgrad").candidate.family \
                    == "dgrad_grouped_packed"
                assert not plan.scratch, "the phases read the stored filter in place"
                names = [step.kernel.fn.__name__ for step in plan.steps]
                assert names == ["packed_kernel"] * 4, names
                # each phase its own group of launcher.branches, forked again on replay
                assert [step.branch for step in plan.steps] == [0, 1, 2, 3]
            if case == "depthwise_s1" and direction == "dgrad":
                assert api.decide(geom, INTERPRETER, direction="dgrad").candidate.family \
                    == "dgrad_depthwise"
                assert not plan.scratch, "dgrad_depthwise reads the filter's taps in place"
            decided = []

            def no_decision(*args, decided=decided, **kwargs):
                decided.append(args)
                raise AssertionError("a replayed call makes no decision")

            monkeypatch.setattr(api, "decide", no_decision)
            x2, w2, dy2 = grad_tensors(geom, seed=2)
            again = A.gradient(geom, direction, dy2, x2, w2)
            monkeypatch.undo()
            assert not decided
            assert rel_err(again, torch_grad(geom, direction, dy2.double(), x2.double(),
                                             w2.double())) < 1e-5
    finally:
        set_chooser(None)
        clear_cache()


def test_gradients_of_one_backward(monkeypatch):
    """``autograd.gradients`` gives each direction's ``gradient`` (into the outputs it
    made first), overlapped or not, the plain calls where only one is needed, and a
    direction no family offers through torch's gradient copied into its output."""
    from convdispatch.dispatcher import autograd as A

    geom = ConvGeometry(n=2, c=8, k=8, g=2, h=6, w=5, r=3, s=3, stride=(1, 2, 2),
                        pad=(0, 1, 1), dtype="float32", layout="channels_last")
    x, w, dy = grad_tensors(geom, seed=3)
    refs = [grad_ref(geom, d, x, w, dy) for d in ("dgrad", "wgrad")]
    clear_cache()
    monkeypatch.setattr(A, "OVERLAP", "always")
    pair = A.gradients(geom, dy, x, w)
    monkeypatch.setattr(A, "OVERLAP", "never")
    in_order = A.gradients(geom, dy, x, w)
    monkeypatch.setattr(A, "OVERLAP", "sometimes")
    with pytest.raises(ValueError, match="OVERLAP"):
        A.gradients(geom, dy, x, w)
    monkeypatch.undo()
    for got, again, ref in zip(pair, in_order, refs):
        assert torch.equal(got, again)
        assert got.stride() == ref.stride()
        assert rel_err(got, ref) < 1e-5
    only_x, none_w = A.gradients(geom, dy, x, w, need_w=False)
    none_x, only_w = A.gradients(geom, dy, x, w, need_x=False)
    assert none_w is None and none_x is None
    assert torch.equal(only_x, pair[0]) and torch.equal(only_w, pair[1])

    def no_candidate(*args, **kwargs):
        raise RuntimeError("no family offers this")

    clear_cache()
    monkeypatch.setattr("convdispatch.dispatcher.api.decide", no_candidate)
    out = torch.full_like(w, float("nan"))
    with pytest.warns(UserWarning, match="no family offers this"):
        got = A.gradient(geom, "wgrad", dy, x, w, out=out)
    assert got is out and rel_err(out, refs[1]) < 1e-5
    clear_cache()


# A small grouped layer for the overlap tests (their kernels are stubbed or run in order).
SMALL_GROUPED = ConvGeometry(n=2, c=8, k=8, g=2, h=6, w=5, r=3, s=3, pad=(0, 1, 1),
                             dtype="float32", layout="channels_last")


def test_flat_grid_pairs_run_in_order(monkeypatch):
    """The shipped H100 models pick flat-grid kernels (each fills the GPU alone) for both
    gradients of ResNeXt-50 layer2.1 at batch 32, which ``pair_overlaps`` keeps in order;
    layer3.0 (a packed dgrad) and a dense layer still overlap, and so do small layers
    whose two kernels each fill the GPU. ``gradients`` asks it only
    when it would overlap, and then runs a refused pair in order."""
    from convdispatch.data.problems import problem_by_id
    from convdispatch.dispatcher import autograd as A
    from convdispatch.kernels.device import KNOWN

    h100 = KNOWN["h100"]
    geoms = {name: problem_by_id(f"{net}/{name}/n32/float16").geom for net, name in (
        ("resnext50_32x4d", "layer2.1.conv2"), ("resnext50_32x4d", "layer3.0.conv2"),
        ("resnet50", "layer3.1.conv2"))}
    clear_cache()
    assert not A.pair_overlaps(geoms["layer2.1.conv2"], h100)
    assert A.pair_overlaps(geoms["layer3.0.conv2"], h100)
    assert A.pair_overlaps(geoms["layer3.1.conv2"], h100)
    # flat-grid pairs of ResNeXt3D-50 (call 212): at once below IN_ORDER_FLOPS only
    small, large = (problem_by_id(f"video3d/resnext3d_50.{name}/float16").geom
                    for name in ("layer2.1.conv2/n8", "layer1.0.conv2/n8"))
    for g in (small, large):
        assert all(f.fills_gpu for f in A._pair_families(g, h100))
    assert small.flops < A.IN_ORDER_FLOPS < large.flops
    assert A.pair_overlaps(small, h100) and not A.pair_overlaps(large, h100)

    def no_candidate(*args, **kwargs):
        raise RuntimeError("no family offers this")

    with monkeypatch.context() as m:  # a direction through torch runs beside the other
        m.setattr("convdispatch.dispatcher.api.decide", no_candidate)
        assert A.pair_overlaps(geoms["layer2.1.conv2"], h100)
    clear_cache()
    geom, (x, w, dy) = SMALL_GROUPED, grad_tensors(SMALL_GROUPED, seed=5)
    asked = []
    monkeypatch.setattr(A, "OVERLAP", "always")
    monkeypatch.setattr(A, "pair_overlaps", lambda g, dev: asked.append(g) or False)
    monkeypatch.setattr(A, "concurrently", None)  # the overlapped path would fail
    dx, dw = A.gradients(geom, dy, x, w)
    assert asked == [geom]
    assert rel_err(dx, grad_ref(geom, "dgrad", x, w, dy)) < 1e-5
    assert rel_err(dw, grad_ref(geom, "wgrad", x, w, dy)) < 1e-5
    clear_cache()



def test_overlapped_gradients_launch_order(monkeypatch):
    """Overlapped, dW's kernels go first where the chosen wgrad family asks
    (``launched_first``: the flat-grid wgrad of ResNeXt-50 layer2.0 on the H100, strided),
    dX's where it does not (``wgrad_staged_tma`` on ResNet-50 layer3.1; the flat-grid
    wgrad at stride 1); ``WGRAD_FIRST``
    forces an order; ``gradients`` launches in that order."""
    import contextlib

    from convdispatch.data.problems import problem_by_id
    from convdispatch.dispatcher import autograd as A
    from convdispatch.dispatcher import registry
    from convdispatch.kernels.device import KNOWN

    h100 = KNOWN["h100"]
    grouped = problem_by_id("resnext50_32x4d/layer2.0.conv2/n32/float16").geom
    dense = problem_by_id("resnet50/layer3.1.conv2/n32/float16").geom
    clear_cache()
    assert [f.name for f in A._pair_families(grouped, h100)][1] == "wgrad_grouped_flat"
    assert [f.name for f in A._pair_families(dense, h100)][1] == "wgrad_staged_tma"
    assert A.wgrad_first(grouped, h100) and not A.wgrad_first(dense, h100)
    assert registry.family("wgrad_grouped_flat").overlap_first
    # ... at a stride only (stride 1: ResNeXt3D-50 layer3.1, call 210)
    flat = problem_by_id("video3d/resnext3d_50.layer3.1.conv2/n8/float16").geom
    assert [f.name for f in A._pair_families(flat, h100)][1] == "wgrad_grouped_flat"
    assert not A.wgrad_first(flat, h100)
    monkeypatch.setattr(A, "WGRAD_FIRST", False)
    assert not A.wgrad_first(grouped, h100)
    monkeypatch.setattr(A, "WGRAD_FIRST", True)
    assert A.wgrad_first(dense, h100)
    clear_cache()
    geom, (x, w, dy) = SMALL_GROUPED, grad_tensors(SMALL_GROUPED, seed=5)
    order = []
    monkeypatch.setattr(A, "OVERLAP", "always")
    monkeypatch.setattr(A, "pair_overlaps", lambda g, dev: True)
    monkeypatch.setattr(A, "concurrently", lambda dev, n: contextlib.nullcontext(
        [contextlib.nullcontext()] * n))
    monkeypatch.setattr(A, "gradient", lambda g, d, *a, out: order.append(d) or out)
    for first, want in ((True, ["wgrad", "dgrad"]), (False, ["dgrad", "wgrad"])):
        monkeypatch.setattr(A, "WGRAD_FIRST", first)
        order.clear()
        A.gradients(geom, dy, x, w)
        assert order == want
    clear_cache()


def test_repeat_differentiable_calls_skip_the_checks(monkeypatch):
    """A differentiable conv whose signature passed the checks once goes straight to the
    autograd function; the gradients are the same, and another signature is checked."""
    from convdispatch.dispatcher import api
    from convdispatch.dispatcher import args as argcheck

    geom = G(n=2, c=8, k=8, h=5, w=6, r=3, s=3, pad=(0, 1, 1), layout="channels_last")
    clear_cache()
    grads = []
    for seed in (1, 2):
        x, w, dy = grad_tensors(geom, seed=seed)
        x.requires_grad_(True)
        w.requires_grad_(True)
        conv2d(x, w, padding=1).backward(dy)
        assert rel_err(x.grad, grad_ref(geom, "dgrad", x.detach(), w.detach(), dy)) < 1e-5
        assert rel_err(w.grad, grad_ref(geom, "wgrad", x.detach(), w.detach(), dy)) < 1e-5
        grads.append((x.grad, w.grad))
        if seed == 1:
            assert len(api.GRAD_CALLS) == 1

            def no_parse(*args, **kwargs):
                raise AssertionError("a known signature is not parsed again")

            monkeypatch.setattr(argcheck, "parse", no_parse)
    monkeypatch.undo()
    with pytest.raises(RuntimeError, match="negative padding"):
        conv2d(x, w, padding=-1)  # another signature: checked
    clear_cache()
    assert not api.GRAD_CALLS


def test_differentiable_call_makes_its_signature_once(monkeypatch):
    """conv_with_grad's signature keys the forward plan too: one ``_signature`` a call
    (activations without a saved pre-activation), and the same gradients."""
    from convdispatch.dispatcher import api

    geom = G(n=2, c=8, k=8, h=5, w=6, r=3, s=3, pad=(0, 1, 1), layout="channels_last")
    made = []
    real = api._signature
    monkeypatch.setattr(api, "_signature", lambda *a: made.append(a) or real(*a))
    clear_cache()
    for seed in (1, 2):
        made.clear()
        x, w, dy = grad_tensors(geom, seed=seed)
        x.requires_grad_(True)
        conv2d(x, w, padding=1, activation="relu").backward(dy)
        assert len(made) == 1, len(made)
        assert len(api.PLANS) == 1
    clear_cache()
