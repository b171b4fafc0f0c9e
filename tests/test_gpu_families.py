"""Every family on real-size shapes on a GPU (run through the device tool)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from convdispatch import conv2d, conv3d
from convdispatch.dispatcher import registry, run_candidate
from convdispatch.kernels.device import spec_of
from convdispatch.kernels.geometry import ConvGeometry

pytestmark = pytest.mark.gpu

CASES = {
    "implicit_gemm": ConvGeometry(n=8, c=128, k=128, h=28, w=28, r=3, s=3, pad=(0, 1, 1)),
    "pointwise": ConvGeometry(n=8, c=256, k=512, h=28, w=28, r=1, s=1, stride=(1, 2, 2)),
    "grouped_gemm": ConvGeometry(n=8, c=256, k=256, g=8, h=28, w=28, r=3, s=3, pad=(0, 1, 1)),
    "grouped_direct": ConvGeometry(n=8, c=192, k=192, g=192, h=28, w=28, r=3, s=3,
                                   pad=(0, 1, 1)),
    "depthwise": ConvGeometry(n=8, c=144, k=144, g=144, h=56, w=56, r=3, s=3, pad=(0, 1, 1)),
    "depthwise_rows": ConvGeometry(n=8, c=96, k=96, g=96, h=112, w=112, r=3, s=3,
                                   stride=(1, 2, 2), pad=(0, 1, 1)),
    "depthwise_span": ConvGeometry(n=8, c=144, k=144, g=144, h=56, w=56, r=3, s=3,
                                   pad=(0, 1, 1)),
    "grouped_packed": ConvGeometry(n=8, c=256, k=256, g=32, h=28, w=28, r=3, s=3,
                                   pad=(0, 1, 1)),
    "grouped_rows": ConvGeometry(n=8, c=128, k=128, g=32, h=56, w=56, r=3, s=3,
                                 pad=(0, 1, 1)),
    "stem": ConvGeometry(n=4, c=3, k=64, h=224, w=224, r=7, s=7, stride=(1, 2, 2),
                         pad=(0, 3, 3)),
    "splitk": ConvGeometry(n=1, c=512, k=512, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
    "grouped_flat": ConvGeometry(n=16, c=512, k=512, g=16, h=14, w=14, r=3, s=3,
                                 stride=(1, 2, 2), pad=(0, 1, 1)),
}

FLAT_CASES = {
    "cg32_7x7": (ConvGeometry(n=32, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
                 torch.float16, "relu"),
    "cg4_56x56_s2_bf16": (ConvGeometry(n=4, c=128, k=128, g=32, h=56, w=56, r=3, s=3,
                                       stride=(1, 2, 2), pad=(0, 1, 1), dtype="bfloat16"),
                          torch.bfloat16, "silu"),
    "cg16_dilated_odd": (ConvGeometry(n=3, c=64, k=96, g=4, h=15, w=19, r=3, s=2,
                                      pad=(0, 2, 1), dilation=(1, 2, 3)), torch.float16, "gelu"),
    # ResNeXt-50 layer1.0 at batch 32: 896 items of 128 positions, every fill of the ladder
    "cg4_56x56_fill": (ConvGeometry(n=32, c=128, k=128, g=32, h=56, w=56, r=3, s=3,
                                    pad=(0, 1, 1)), torch.float16, "relu"),
    "cg8_s3x2": (ConvGeometry(n=2, c=64, k=64, g=8, h=23, w=17, r=3, s=3, stride=(1, 3, 2),
                              pad=(0, 0, 2), dilation=(1, 2, 1)), torch.float16, "relu6"),
    # the row-reuse schedule (28 columns: a 32-wide grid) in bfloat16
    "cg8_28x28_reuse_bf16": (ConvGeometry(n=2, c=256, k=256, g=32, h=28, w=28, r=3, s=3,
                                          pad=(0, 1, 1), dtype="bfloat16"),
                             torch.bfloat16, "silu"),
    # 3D: a program sums an item's depth taps (ResNeXt3D-50's layer2.1 and layer2.0 shapes)
    "cg8_3d": (ConvGeometry(n=2, c=256, k=256, g=32, d=4, h=14, w=14, t=3, r=3, s=3,
                            pad=(1, 1, 1), dims=3), torch.float16, "relu"),
    "cg4_3d_s2_bf16": (ConvGeometry(n=2, c=128, k=128, g=32, d=8, h=28, w=28, t=3, r=3, s=3,
                                    stride=(2, 2, 2), pad=(1, 1, 1), dims=3,
                                    dtype="bfloat16"), torch.bfloat16, "silu"),
}


@pytest.mark.parametrize("case", sorted(FLAT_CASES))
def test_grouped_flat_configs_with_epilogue(case):
    """grouped_flat (Gluon; the interpreter cannot run it): every config it offers, with
    bias, a residual and an activation fused, against torch in float32, into a poisoned
    output."""
    from convdispatch.dispatcher.fallback import ACTIVATION_FNS

    geom, dtype, act = FLAT_CASES[case]
    cands = [c for c in registry.candidates(geom, spec_of("cuda")) if c.family == "grouped_flat"]
    assert cands
    x, w, b = tensors(geom, dtype=dtype)
    fmt = torch.channels_last if geom.dims == 2 else torch.channels_last_3d
    res = torch.randn(geom.n, geom.k, *geom.out_spatial[3 - geom.dims:], device="cuda",
                      dtype=dtype).to(memory_format=fmt)
    ref = ACTIVATION_FNS[act](reference(geom, x, w, b) + res.float())
    for cand in cands:
        out = torch.full(ref.shape, float("nan"), device="cuda", dtype=dtype).to(
            memory_format=fmt)
        run_candidate(cand, x, w, b, geom, activation=act, residual=res, out=out)
        assert rel(out, ref) < (3e-2 if dtype == torch.bfloat16 else 1e-2), cand.id


@pytest.mark.parametrize("geom", [
    ConvGeometry(n=2, c=64, k=64, g=8, h=14, w=14, r=3, s=3, pad=(0, 1, 1)),
    # one depth: the kernel reads a view of the filter's middle depth plane (dead_taps)
    ConvGeometry(n=2, c=256, k=256, g=32, d=1, h=4, w=4, t=3, r=3, s=3, pad=(1, 1, 1),
                 dims=3)], ids=["2d", "3d-dead-taps"])
def test_grouped_flat_filter_vectors_where_unaligned(geom):
    """The filter tiles' vector loads (``filter_vector``'s W_VEC of 8) on a filter as
    stored, on one a single element past 16 bytes (Triton then proves no alignment of its
    address and loads it two bytes at a time) and on a view of its live taps: the same
    bits, against torch in float32, for every config the family offers."""
    from helpers import conv_call, launch_filter_vector, unaligned

    assert launch_filter_vector(conv_call(geom)) == 8
    x, w, b = tensors(geom)
    ref = reference(geom, x, w, b)
    cands = [c for c in registry.candidates(geom, spec_of("cuda")) if c.family == "grouped_flat"]
    assert cands
    for cand in cands:
        outs = []
        for filt in (w, unaligned(w)):
            out = torch.full_like(ref, float("nan"), dtype=x.dtype)
            run_candidate(cand, x, filt, b, geom, out=out)
            assert rel(out, ref) < 1e-2, cand.id
            outs.append(out)
        assert torch.equal(*outs), cand.id


def tensors(geom, layout="channels_last", dtype=torch.float16, seed=0):
    torch.manual_seed(seed)
    sp = (geom.d, geom.h, geom.w)[3 - geom.dims:]
    fl = (geom.t, geom.r, geom.s)[3 - geom.dims:]
    x = torch.randn(geom.n, geom.c, *sp, device="cuda", dtype=dtype)
    w = torch.randn(geom.k, geom.cg, *fl, device="cuda", dtype=dtype) / geom.gemm_k ** 0.5
    if layout == "channels_last":
        fmt = torch.channels_last if geom.dims == 2 else torch.channels_last_3d
        x, w = x.to(memory_format=fmt), w.to(memory_format=fmt)
    return x, w, torch.randn(geom.k, device="cuda", dtype=dtype)


def reference(geom, x, w, b):
    lead = 3 - geom.dims
    fn = F.conv2d if geom.dims == 2 else F.conv3d
    return fn(x.float(), w.float(), b.float(), geom.stride[lead:], geom.pad[lead:],
              geom.dilation[lead:], geom.g)


def rel(a, b):
    return float((a.float() - b).norm() / b.norm())


@pytest.mark.parametrize("family", sorted(CASES))
def test_family_configs_on_real_shapes(family):
    geom = CASES[family]
    cands = [c for c in registry.candidates(geom, spec_of("cuda")) if c.family == family]
    assert cands, f"{family} has no feasible config for {geom.describe()}"
    x, w, b = tensors(geom)
    ref = reference(geom, x, w, b)
    for cand in cands[:: max(1, len(cands) // 4)]:
        out = torch.full(ref.shape, float("nan"), device="cuda", dtype=x.dtype).to(
            memory_format=torch.channels_last)
        run_candidate(cand, x, w, b, geom, out=out)
        assert rel(out, ref) < 1e-2, cand.id


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 1e-2), (torch.bfloat16, 3e-2),
                                       (torch.float32, 1e-2)])
@pytest.mark.parametrize("layout", ["channels_last", "contiguous"])
def test_call_path_dtypes_layouts(dtype, tol, layout):
    geom = ConvGeometry(n=4, c=64, k=96, h=30, w=30, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1))
    x, w, b = tensors(geom, layout, dtype)
    res = torch.randn(4, 96, 15, 15, device="cuda", dtype=dtype)
    out = conv2d(x, w, b, stride=2, padding=1, activation="silu", residual=res)
    ref = F.silu(reference(geom, x, w, b) + res.float())
    assert rel(out, ref) < tol
    want = torch.channels_last if layout == "channels_last" else torch.contiguous_format
    assert out.is_contiguous(memory_format=want)


def test_conv3d_real_size():
    geom = ConvGeometry(n=2, c=64, k=64, d=8, h=28, w=28, t=3, r=3, s=3, pad=(1, 1, 1), dims=3)
    x, w, b = tensors(geom)
    out = conv3d(x, w, b, padding=1)
    assert rel(out, reference(geom, x, w, b)) < 1e-2
