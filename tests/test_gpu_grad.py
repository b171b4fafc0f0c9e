"""Gradient kernels on real-size shapes on a GPU (run through the device tool)."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F
from convdispatch import conv2d, conv3d
from convdispatch.dispatcher import registry
from convdispatch.dispatcher.launch import run_grad_candidate
from convdispatch.kernels.device import spec_of
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.validation.inputs import grad_reference, make_grad_output, make_inputs

pytestmark = pytest.mark.gpu

CASES = {
    "dense3x3": ConvGeometry(n=8, c=128, k=128, h=28, w=28, r=3, s=3, pad=(0, 1, 1)),
    "dense3x3_s2": ConvGeometry(n=8, c=64, k=128, h=56, w=56, r=3, s=3, stride=(1, 2, 2),
                                pad=(0, 1, 1)),
    "pointwise_s2": ConvGeometry(n=8, c=256, k=512, h=28, w=28, r=1, s=1, stride=(1, 2, 2)),
    "pointwise_s1": ConvGeometry(n=8, c=256, k=512, h=28, w=28, r=1, s=1),
    "pointwise_odd_s2": ConvGeometry(n=4, c=64, k=128, h=29, w=27, r=1, s=1,
                                     stride=(1, 2, 2)),
    "depthwise3x3": ConvGeometry(n=8, c=144, k=144, g=144, h=56, w=56, r=3, s=3,
                                 pad=(0, 1, 1)),
    "dense5x5_dilated": ConvGeometry(n=4, c=64, k=96, h=30, w=30, r=5, s=5, pad=(0, 4, 4),
                                     dilation=(1, 2, 2)),
    "batch1_deep": ConvGeometry(n=1, c=512, k=512, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
    "grouped_cg4": ConvGeometry(n=8, c=256, k=256, g=64, h=28, w=28, r=3, s=3, pad=(0, 1, 1)),
    "grouped_cg32": ConvGeometry(n=8, c=256, k=256, g=8, h=28, w=28, r=3, s=3, pad=(0, 1, 1)),
    "grouped_cg8_s2": ConvGeometry(n=8, c=256, k=256, g=32, h=56, w=56, r=3, s=3,
                                   stride=(1, 2, 2), pad=(0, 1, 1)),  # stride phases
    "depthwise_s2": ConvGeometry(n=8, c=192, k=192, g=192, h=56, w=56, r=3, s=3,
                                 stride=(1, 2, 2), pad=(0, 1, 1)),
    # dgrad_depthwise_span's one-launch strided kernel: odd maps, a 5x5 filter
    "depthwise_s2_odd": ConvGeometry(n=8, c=576, k=576, g=576, h=15, w=13, r=3, s=3,
                                     stride=(1, 2, 2), pad=(0, 1, 1)),
    "depthwise5x5_s2": ConvGeometry(n=4, c=240, k=240, g=240, h=27, w=29, r=5, s=5,
                                    stride=(1, 2, 2), pad=(0, 2, 2)),
    # an odd channel count: spans start mid-pixel (wgrad_depthwise_span's one-warp configs
    # summed wrong here on the H100, call 147, and left its space)
    "depthwise_c143": ConvGeometry(n=45, c=143, k=143, g=143, h=13, w=13, r=3, s=3,
                                   pad=(0, 1, 1)),
    "depthwise7x7": ConvGeometry(n=8, c=256, k=256, g=256, h=28, w=28, r=7, s=7, pad=(0, 3, 3)),
    "stem": ConvGeometry(n=4, c=3, k=64, h=224, w=224, r=7, s=7, stride=(1, 2, 2),
                         pad=(0, 3, 3)),
    "conv3d": ConvGeometry(n=2, c=64, k=64, d=8, h=28, w=28, t=3, r=3, s=3, pad=(1, 1, 1),
                           dims=3),
    # wgrad_staged_tma's packs of 16-channel groups, strided, and a 7x7 map at batch 32
    "grouped_cg16_s2": ConvGeometry(n=8, c=512, k=512, g=32, h=28, w=28, r=3, s=3,
                                    stride=(1, 2, 2), pad=(0, 1, 1)),
    "dense7x7_n32": ConvGeometry(n=32, c=512, k=512, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
    # 3D grouped (ResNeXt3D-50's layer2.1 and layer1.0 shapes, the second strided)
    "grouped3d_cg8": ConvGeometry(n=2, c=256, k=256, g=32, d=4, h=14, w=14, t=3, r=3, s=3,
                                  pad=(1, 1, 1), dims=3),
    "grouped3d_cg4_s2": ConvGeometry(n=2, c=128, k=128, g=32, d=8, h=28, w=28, t=3, r=3,
                                     s=3, stride=(2, 2, 2), pad=(1, 1, 1), dims=3),
}


@pytest.mark.parametrize("direction", ["dgrad", "wgrad"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_grad_families_on_real_shapes(case, direction):
    geom = CASES[case]
    cands = registry.candidates(geom, spec_of("cuda"), direction)
    assert cands, f"no {direction} candidate for {geom.describe()}"
    x, w, _ = make_inputs(geom, "cuda", 0)
    dy = make_grad_output(geom, "cuda", 0)
    ref = grad_reference(geom, direction, dy, x, w)
    for fam in sorted({c.family for c in cands}):
        mine = [c for c in cands if c.family == fam]
        for cand in {mine[0], mine[-1]}:
            like = x if direction == "dgrad" else w
            out = torch.full_like(like, float("nan"))
            run_grad_candidate(cand, direction, dy, x, w, geom, out=out)
            err = float((out.double().cpu() - ref.double().cpu()).norm() / ref.double().norm())
            assert err < 1e-2, (cand.id, err)


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 1e-2), (torch.bfloat16, 3e-2),
                                       (torch.float32, 1e-2)])
@pytest.mark.parametrize("layout", ["channels_last", "contiguous"])
def test_autograd_matches_torch(dtype, tol, layout):
    torch.manual_seed(0)
    fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
    x = torch.randn(4, 64, 30, 30, device="cuda", dtype=dtype).to(memory_format=fmt)
    w = (torch.randn(96, 16, 3, 3, device="cuda", dtype=dtype) / 12).to(memory_format=fmt)
    b = torch.randn(96, device="cuda", dtype=dtype)
    res = torch.randn(4, 96, 15, 15, device="cuda", dtype=dtype)
    leaves = [t.clone().requires_grad_() for t in (x, w, b, res)]
    ours = conv2d(*leaves[:3], stride=2, padding=1, groups=4, activation="silu",
                  residual=leaves[3])
    gy = torch.randn_like(ours)
    grads = torch.autograd.grad(ours, leaves, gy)
    refs = [t.detach().float().requires_grad_() for t in (x, w, b, res)]
    y = F.silu(F.conv2d(*refs[:3], stride=2, padding=1, groups=4) + refs[3])
    want = torch.autograd.grad(y, refs, gy.float())
    for name, g, r in zip(("input", "weight", "bias", "residual"), grads, want):
        assert g.dtype == dtype
        err = float((g.float() - r).norm() / r.norm())
        assert err < tol, (name, err)
    assert grads[0].is_contiguous(memory_format=fmt)


def test_conv3d_backward_real_size():
    x = torch.randn(2, 32, 8, 28, 28, device="cuda", requires_grad=True)
    w = torch.randn(32, 32, 3, 3, 3, device="cuda", requires_grad=True)
    gx, gw = torch.autograd.grad(conv3d(x, w, padding=1).square().sum(), (x, w))
    with torch.backends.cudnn.flags(allow_tf32=False):
        rx, rw = torch.autograd.grad(F.conv3d(x, w, padding=1).square().sum(), (x, w))
    assert float((gx - rx).norm() / rx.norm()) < 1e-2
    assert float((gw - rw).norm() / rw.norm()) < 1e-2


@pytest.mark.parametrize("family", ["dgrad_grouped_packed", "dgrad_implicit_gemm",
                                    "dgrad_splitk"])
def test_stride_phases_on_side_streams(family):
    """Strided dgrad's phases run on side streams (launcher.branches): eager, replayed
    from a recorded Plan (the fork again) and inside a CUDA graph capture, each result
    equal to the phases run in order on one stream, bit for bit."""
    from convdispatch.dispatcher.launch import launch_grad
    from convdispatch.kernels import launcher

    g = (ConvGeometry(n=8, c=256, k=256, g=32, h=28, w=28, r=3, s=3, stride=(1, 2, 2),
                      pad=(0, 1, 1), layout="channels_last")
         if family == "dgrad_grouped_packed" else
         ConvGeometry(n=4, c=128, k=128, h=28, w=28, r=3, s=3, stride=(1, 2, 2),
                      pad=(0, 1, 1), layout="channels_last"))
    cand = registry.candidates(g, spec_of("cuda"), "dgrad")
    cand = next(c for c in cand if c.family == family)
    x, w, _ = make_inputs(g, "cuda", 0)
    dy = make_grad_output(g, "cuda", 0)
    launcher.BRANCHES = False
    try:
        in_order = torch.full_like(x, float("nan"))
        launch_grad(cand, g, dy, x=x, w=w, out=in_order)
    finally:
        launcher.BRANCHES = True
    eager = torch.full_like(x, float("nan"))
    plan = launch_grad(cand, g, dy, x=x, w=w, out=eager, record=True)
    assert plan is not None and {s.branch for s in plan.steps} == {0, 1, 2, 3}
    replayed = torch.full_like(x, float("nan"))
    assert plan.run({"dy": dy, "x": x, "w": w, "out": replayed}, dy.device)
    captured = torch.full_like(x, float("nan"))
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        launch_grad(cand, g, dy, x=x, w=w, out=captured)  # warm-up off the capture
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        launch_grad(cand, g, dy, x=x, w=w, out=captured)
    captured.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    ref = grad_reference(g, "dgrad", dy, x, w).double().cpu()
    assert float((in_order.double().cpu() - ref).norm() / ref.norm()) < 1e-2
    for got in (eager, replayed, captured):
        assert torch.equal(got, in_order)


@pytest.mark.parametrize("case", ["grouped_cg8_s2", "depthwise3x3", "dense3x3"])
def test_gradients_overlap_on_side_streams(case):
    """dX and dW of one backward at once on side streams (``autograd.gradients``): eager
    (OVERLAP "always"), replayed from the recorded plans, and inside a CUDA graph capture
    (the default "graphs"), each equal bit for bit to the two run in order on one stream,
    and to torch's gradients."""
    from convdispatch.dispatcher import autograd

    g = dataclasses.replace(CASES[case], layout="channels_last")
    x, w, _ = make_inputs(g, "cuda", 0)
    dy = make_grad_output(g, "cuda", 0)
    in_order = autograd.gradients(g, dy, x, w)  # eager: in order ("graphs")
    autograd.OVERLAP = "always"
    try:
        eager = autograd.gradients(g, dy, x, w)
        replayed = autograd.gradients(g, dy, x, w)
    finally:
        autograd.OVERLAP = "graphs"
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        autograd.gradients(g, dy, x, w)  # warm-up off the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = autograd.gradients(g, dy, x, w)
    for t in captured:
        t.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    for i, direction in enumerate(("dgrad", "wgrad")):
        ref = grad_reference(g, direction, dy, x, w).double().cpu()
        assert float((in_order[i].double().cpu() - ref).norm() / ref.norm()) < 1e-2
        for got in (eager, replayed, captured):
            assert torch.equal(got[i], in_order[i]), (direction, case)


HALO_CASES = {
    "cg16_14x14": ConvGeometry(n=8, c=256, k=256, g=16, h=14, w=14, r=3, s=3, pad=(0, 1, 1)),
    "cg4_56x56": ConvGeometry(n=2, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1)),
    "cg8_s2_bf16": ConvGeometry(n=4, c=256, k=256, g=32, h=28, w=28, r=3, s=3,
                                stride=(1, 2, 2), pad=(0, 1, 1), dtype="bfloat16"),
    "cg32_7x7": ConvGeometry(n=8, c=256, k=256, g=8, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
    "cg16_dilated_odd": ConvGeometry(n=3, c=64, k=64, g=4, h=15, w=19, r=3, s=2,
                                     pad=(0, 2, 1), dilation=(1, 2, 3)),
    "cg32_s2_7x7": ConvGeometry(n=6, c=256, k=256, g=8, h=14, w=14, r=3, s=3,
                                stride=(1, 2, 2), pad=(0, 1, 1)),
    "cg8_s3_dilated": ConvGeometry(n=2, c=64, k=64, g=8, h=23, w=17, r=3, s=3,
                                   stride=(1, 3, 2), pad=(0, 0, 2), dilation=(1, 2, 1)),
    # 3D (wgrad_grouped_flat only): a program a plane of taps; depth stride and dilation
    "cg8_3d": ConvGeometry(n=2, c=256, k=256, g=32, d=4, h=14, w=14, t=3, r=3, s=3,
                           pad=(1, 1, 1), dims=3),
    "cg16_3d_s2_dil": ConvGeometry(n=3, c=256, k=256, g=16, d=9, h=12, w=12, t=3, r=3, s=3,
                                   stride=(2, 1, 2), pad=(2, 1, 1), dilation=(2, 1, 1),
                                   dims=3),
}


@pytest.mark.parametrize("geom", [
    ConvGeometry(n=1, c=1024, k=1024, g=32, d=1, h=4, w=4, t=3, r=3, s=3, pad=(1, 1, 1),
                 dims=3),
    ConvGeometry(n=1, c=512, k=512, g=32, d=2, h=7, w=7, t=3, r=3, s=3, pad=(1, 1, 1),
                 dims=3),
], ids=["resnext3d_layer4.1_n1", "resnext3d_layer3.1_n1"])
def test_dgrad_grouped_packed_split_configs(geom):
    """Every split config of grouped_packed's dgrad twin on ResNeXt3D-50's batch-1 layers
    (32 tiles of 27 taps), into a poisoned dX, against torch in float64."""
    fam = registry.family("dgrad_grouped_packed")
    cands = [c for c in fam.candidates(geom, spec_of("cuda")) if c.config.get("SPLIT_K", 1) > 1]
    assert cands
    x, w, _ = make_inputs(geom, "cuda", 2)
    dy = make_grad_output(geom, "cuda", 2)
    ref = grad_reference(geom, "dgrad", dy, x, w)
    for cand in cands:
        out = torch.full_like(x, float("nan"))
        run_grad_candidate(cand, "dgrad", dy, x, w, geom, out=out)
        err = float((out.double().cpu() - ref.double().cpu()).norm() / ref.double().norm())
        assert err < 1e-2, (cand.id, err)


@pytest.mark.parametrize("case,family", [
    (case, family) for case in sorted(HALO_CASES)
    for family in ("wgrad_grouped_halo", "wgrad_grouped_flat")
    if family == "wgrad_grouped_flat" or HALO_CASES[case].dims == 2])
def test_halo_wgrad_configs(case, family):
    """The Gluon grouped wgrad families (the interpreter cannot run them): every tile
    shape they offer, unsplit and split, against torch in float64; with dY not
    channels_last too."""
    geom = HALO_CASES[case]
    fam = registry.family(family)
    x, w, _ = make_inputs(geom, "cuda", 1)
    dy = make_grad_output(geom, "cuda", 1)
    ref = grad_reference(geom, "wgrad", dy, x, w)
    seen = set()
    for cand in fam.candidates(geom, spec_of("cuda")):
        cfg = cand.config
        shape = (*(v for k, v in sorted(cfg.items()) if k != "SPLIT_K"), cfg["SPLIT_K"] > 1)
        if shape in seen:
            continue
        seen.add(shape)
        for dyv in (dy, dy.contiguous()) if len(seen) == 1 else (dy,):
            out = torch.full_like(w, float("nan"))
            run_grad_candidate(cand, "wgrad", dyv, x, w, geom, out=out)
            err = float((out.double().cpu() - ref.double().cpu()).norm() / ref.double().norm())
            assert err < (3e-2 if geom.dtype == "bfloat16" else 1e-2), (cfg, err)
    assert len(seen) >= 2
