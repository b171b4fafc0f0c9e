"""Repeat calls of TMA launches replay their plans: a tensor descriptor holds its
tensor's address, so a plan keeps how it was made (shape, strides, box) and makes a new
one over each call's tensor; a call whose tensor TMA cannot take (an unaligned address)
runs the checked path instead, and the plan stays for the calls it fits."""

from __future__ import annotations

import functools

import pytest
import torch
from convdispatch import conv2d
from convdispatch.dispatcher import api, registry, set_chooser
from convdispatch.dispatcher import autograd as A
from convdispatch.kernels.device import INTERPRETER
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.kernels.launcher import Plan, _Recipe
from helpers import (
    TOL,
    PickFamily,
    conv_kwargs,
    reference,
    rel_err,
    tensors_for,
    unaligned,
)

G = functools.partial(ConvGeometry, layout="channels_last")

CASES = [
    ("implicit_gemm_tma", G(n=1, c=32, k=32, h=4, w=5, r=3, s=3, pad=(0, 1, 1),
                            dtype="float32")),
    ("implicit_gemm_tma_persistent", G(n=2, c=32, k=32, h=4, w=4, r=3, s=3, pad=(0, 1, 1),
                                       dtype="float16")),
    ("pointwise_tma", G(n=1, c=32, k=32, h=4, w=4, r=1, s=1, dtype="float32")),
    ("dgrad_implicit_gemm_tma", G(n=1, c=32, k=32, h=5, w=4, r=3, s=3, pad=(0, 1, 1),
                                  dtype="float16")),
    ("dgrad_pointwise_tma", G(n=2, c=32, k=48, h=3, w=4, r=1, s=1, dtype="float16")),
    ("wgrad_pointwise_tma", G(n=2, c=32, k=48, h=3, w=4, r=1, s=1, dtype="float16")),
    ("wgrad_implicit_gemm_tma", G(n=1, c=32, k=16, h=5, w=4, r=3, s=3, pad=(0, 1, 1),
                                  dtype="float16")),
    ("wgrad_staged_tma", G(n=1, c=16, k=16, h=5, w=4, r=3, s=3, pad=(0, 1, 1),
                           dtype="float32")),
]


def _inputs(geom: ConvGeometry, seed: int):
    x, w, _ = tensors_for(geom, seed=seed, bias=False)
    gen = torch.Generator().manual_seed(seed + 100)
    dy = torch.randn(geom.n, geom.k, *geom.out_spatial[1:], generator=gen).to(x.dtype)
    return x, w, dy.to(memory_format=torch.channels_last)


def _run(direction: str, geom: ConvGeometry, x, w, dy):
    """(ours, the float64 reference) of one call through the dispatcher."""
    if direction == "forward":
        return conv2d(x, w, **conv_kwargs(geom)), reference(geom, x, w)
    ours = A.gradient(geom, direction, dy, x, w)
    ref = A.torch_grad(geom, direction, dy.double(), x.double(), w.double())
    return ours, ref


@pytest.mark.parametrize("family,geom", CASES, ids=[f for f, _ in CASES])
def test_descriptor_launches_replay_with_new_tensors(family, geom, monkeypatch,
                                                     clean_dispatcher):
    direction = registry.family(family).direction
    assert any(c.family == family for c in registry.candidates(geom, INTERPRETER, direction))
    plans = api.PLANS if direction == "forward" else api.GRAD_PLANS
    set_chooser(PickFamily(family))
    ours, ref = _run(direction, geom, *_inputs(geom, 1))
    assert rel_err(ours, ref) < TOL[geom.dtype]
    (plan,) = plans.values()
    plan = plan[0] if direction == "forward" else plan
    recipes = [r for step in plan.steps for *_, r in step.slots if r is not None]
    assert recipes, "the launch took descriptors and the plan keeps their recipes"

    def no_decision(*args, **kwargs):
        raise AssertionError("a replayed call makes no decision")

    real = api.decide
    monkeypatch.setattr(api, "decide", no_decision)
    ours, ref = _run(direction, geom, *_inputs(geom, 2))
    assert rel_err(ours, ref) < TOL[geom.dtype]

    decided = []
    monkeypatch.setattr(api, "decide", lambda *a, **k: decided.append(1) or real(*a, **k))
    x, w, dy = _inputs(geom, 3)
    ours, ref = _run(direction, geom, unaligned(x), w, unaligned(dy))
    assert rel_err(ours, ref) < TOL[geom.dtype]
    if family != "wgrad_staged_tma":  # its descriptors are over its own staging copies
        assert decided, "an unaligned tensor goes the checked path"
    # alignment is part of a plan's key: the unaligned call has an entry of its own, and
    # the aligned calls' plan stays
    assert len(plans) == 2 and plan in [
        p[0] if direction == "forward" else p for p in plans.values() if p is not None], \
        "the plan stays for the calls it fits"


def test_plan_run_launches_nothing_when_a_descriptor_cannot_be_made():
    from convdispatch.dispatcher.launch import launch

    family, geom = CASES[0]
    x, w, _ = tensors_for(geom, seed=1, bias=False)
    out = torch.empty(1, 32, 4, 5).to(memory_format=torch.channels_last)
    cand = next(c for c in registry.candidates(geom, INTERPRETER) if c.family == family)
    plan = launch(cand, x, w, None, geom, out, record=True)
    assert isinstance(plan, Plan)
    poisoned = torch.full_like(out, float("nan"))
    named = {"x": unaligned(x)[:, :, None], "w": w[:, :, None],
             "out": poisoned[:, :, None], "bias": None, "residual": None}
    assert not plan.run(named, x.device)
    assert poisoned.isnan().all(), "nothing ran"
    assert plan.run({**named, "x": x[:, :, None]}, x.device)
    assert rel_err(poisoned, reference(geom, x, w)) < TOL[geom.dtype]


def test_recipe_of_a_descriptor_only():
    from triton.tools.tensor_descriptor import TensorDescriptor

    t = torch.randn(8, 16)
    made = TensorDescriptor.from_tensor(t, [4, 16])
    r = _Recipe.of(made)
    assert r.kind is TensorDescriptor and "base" not in r.fields
    assert _Recipe.of(t) is None and _Recipe.of(3) is None
    other = t.clone()
    again = r.over(other)
    assert isinstance(again, TensorDescriptor) and again.base is other
    assert again == TensorDescriptor.from_tensor(other, [4, 16])
    assert made.base is t, "the recorded descriptor is left as it was"
    assert r.over(unaligned(t)) is None

    class Holder:  # holds a tensor, but no recipe remakes it
        base = t

    with pytest.raises(RuntimeError, match="holding a tensor"):
        _Recipe.of(Holder())


def test_descriptor_plans_switch(monkeypatch):
    """With ``launcher.DESCRIPTOR_PLANS`` off a TMA launch records no plan (every call
    takes the checked path), as before descriptors were remade."""
    from convdispatch.dispatcher.launch import launch
    from convdispatch.kernels import launcher

    family, geom = CASES[0]
    x, w, _ = tensors_for(geom, seed=1, bias=False)
    out = torch.empty(1, 32, 4, 5).to(memory_format=torch.channels_last)
    cand = next(c for c in registry.candidates(geom, INTERPRETER) if c.family == family)
    monkeypatch.setattr(launcher, "DESCRIPTOR_PLANS", False)
    assert launch(cand, x, w, None, geom, out, record=True) is None
    assert rel_err(out, reference(geom, x, w)) < TOL[geom.dtype]
