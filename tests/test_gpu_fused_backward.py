"""Both gradients in one kernel (``backward_grouped_flat``) on a GPU (the device tool)."""

from __future__ import annotations

import pytest
import torch
from convdispatch.dispatcher import autograd, fused_pair
from convdispatch.dispatcher.launch import empty_grad
from convdispatch.kernels import backward_grouped_flat as fused
from convdispatch.kernels.device import spec_of
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.validation.inputs import grad_reference, make_grad_output, make_inputs
from convdispatch.validation.timing import graph_of

pytestmark = pytest.mark.gpu

CL = dict(dtype="float16", layout="channels_last")
CASES = {
    "cg4_56x56": ConvGeometry(n=2, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1),
                              **CL),
    "cg16_14x14": ConvGeometry(n=8, c=256, k=256, g=16, h=14, w=14, r=3, s=3, pad=(0, 1, 1),
                               **CL),
    "cg8_c_ne_k_odd": ConvGeometry(n=3, c=64, k=128, g=8, h=23, w=17, r=3, s=3,
                                   pad=(0, 1, 1), **CL),
    "cg8_dilated": ConvGeometry(n=2, c=64, k=64, g=8, h=21, w=30, r=3, s=3, pad=(0, 2, 2),
                                dilation=(1, 2, 2), **CL),
    "cg8_s2": ConvGeometry(n=4, c=256, k=256, g=32, h=28, w=28, r=3, s=3, stride=(1, 2, 2),
                           pad=(0, 1, 1), **CL),
    "cg16_s2_odd": ConvGeometry(n=3, c=256, k=256, g=16, h=15, w=13, r=3, s=3,
                                stride=(1, 2, 2), pad=(0, 1, 1), **CL),
    "cg4_1x1_s2_valid": ConvGeometry(n=2, c=64, k=64, g=16, h=12, w=11, r=1, s=1,
                                     stride=(1, 2, 2), **CL),
    "cg8_s2_asym_pads": ConvGeometry(n=4, c=128, k=128, g=16, h=19, w=19, r=3, s=3,
                                     stride=(1, 2, 2), pad=(0, 1, 1), pad_hi=(0, 0, 2), **CL),
    "cg8_s2_dilated_pad2": ConvGeometry(n=4, c=128, k=128, g=16, h=33, w=31, r=3, s=3,
                                        stride=(1, 2, 2), pad=(0, 2, 2), dilation=(1, 2, 2),
                                        **CL),
    "cg6_3x1_bf16": ConvGeometry(n=3, c=96, k=96, g=16, h=20, w=20, r=3, s=1, pad=(0, 1, 0),
                                 dtype="bfloat16", layout="channels_last"),
    "3d_cg4": ConvGeometry(n=2, c=128, k=128, g=32, d=4, h=14, w=14, t=3, r=3, s=3,
                           pad=(1, 1, 1), dims=3, **CL),
    "3d_cg8_s2": ConvGeometry(n=2, c=256, k=256, g=32, d=8, h=28, w=28, t=3, r=3, s=3,
                              stride=(2, 2, 2), pad=(1, 1, 1), dims=3, **CL),
    "3d_cg16_s2_odd": ConvGeometry(n=2, c=256, k=256, g=16, d=5, h=15, w=13, t=3, r=3, s=3,
                                   stride=(2, 2, 2), pad=(1, 1, 1), dims=3, **CL),
    "3d_cg8_depth_dilated": ConvGeometry(n=2, c=64, k=128, g=8, d=6, h=11, w=9, t=3, r=3,
                                         s=3, pad=(2, 1, 1), dilation=(2, 1, 1), dims=3,
                                         **CL),
    "3d_cg8_1x3x3_bf16": ConvGeometry(n=2, c=64, k=64, g=8, d=3, h=16, w=16, t=1, r=3, s=3,
                                      pad=(0, 1, 1), dims=3, dtype="bfloat16",
                                      layout="channels_last"),
}


def _check(geom, dy, x, w, dx, dw):
    tol = 3e-2 if geom.dtype == "bfloat16" else 1e-2
    for direction, got in (("dgrad", dx), ("wgrad", dw)):
        ref = grad_reference(geom, direction, dy, x, w).double().cpu()
        err = float((got.double().cpu() - ref).norm() / ref.norm())
        assert err < tol, (direction, err)


def _configs(geom, dev) -> list:
    """Unsplit, 2- and 4-way split configs of one item size (the dispatcher's, else the first
    that fits), and the dispatcher's config where it fuses the pass."""
    rule = fused.pair_config(geom, dev)
    fits = [c for c in fused.CONFIGS if fused.config_rejects(geom, c, dev) is None]
    pos = rule["BLOCK_M"] if rule else min(
        {c["BLOCK_M"] for c in fits}, key=fused.POSITIONS_ORDER.index)
    return [c for c in fits if c["SPLIT_K"] in (1, 2, 4) and c["BLOCK_M"] == pos] + (
        [rule] if rule else [])


@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_configs_match_torch(case):
    """``_configs``' configs, into outputs poisoned with NaN, against
    torch in float64; dY not channels_last too (copied by ``aligned_pixels``)."""
    geom = CASES[case]
    assert fused.supports(geom) is None
    dev = spec_of("cuda")
    x, w, _ = make_inputs(geom, "cuda", 3)
    dy = make_grad_output(geom, "cuda", 3)
    cfgs = _configs(geom, dev)
    assert len(cfgs) >= 2
    for i, cfg in enumerate(cfgs):
        for dyv in (dy, dy.contiguous()) if i == 0 else (dy,):
            dx = empty_grad("dgrad", x, w).fill_(float("nan"))
            dw = empty_grad("wgrad", x, w).fill_(float("nan"))
            fused.launch(dyv, x, w, dx, dw, geom, cfg)
            torch.cuda.synchronize()
            _check(geom, dy, x, w, dx, dw)


@pytest.mark.parametrize("case", ["cg4_56x56", "3d_cg8_s2"])
def test_gradients_fused_eager_replayed_captured(monkeypatch, case):
    """``autograd.gradients`` through the fused kernel: eager, replayed from its recorded
    plan, and captured in a CUDA graph, each equal bit for bit to a direct launch."""
    geom = CASES[case]
    dev = spec_of("cuda")
    cfg = fused.rule_config(geom, dev)
    monkeypatch.setattr(fused_pair, "pair_config", lambda g, d: cfg)
    x, w, _ = make_inputs(geom, "cuda", 5)
    dy = make_grad_output(geom, "cuda", 5)
    dx, dw = empty_grad("dgrad", x, w), empty_grad("wgrad", x, w)
    fused.launch(dy, x, w, dx, dw, geom, cfg)
    fused_pair.PLANS.clear()
    eager = autograd.gradients(geom, dy, x, w)
    replayed = autograd.gradients(geom, dy, x, w)
    assert any(p is not None for p in fused_pair.PLANS.values())
    outs = []
    replay = graph_of(lambda: outs.append(autograd.gradients(geom, dy, x, w)))
    captured = outs[-1]  # the outputs the graph writes
    for t in captured:
        t.fill_(float("nan"))
    replay()
    torch.cuda.synchronize()
    _check(geom, dy, x, w, dx, dw)
    for got in (eager, replayed, captured):
        assert torch.equal(got[0], dx) and torch.equal(got[1], dw)
