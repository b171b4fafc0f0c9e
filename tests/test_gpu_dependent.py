"""Split launches whose reduction pass runs as a programmatic dependent (``dependent``),
on a GPU (run through the device tool): eager, replayed from a recorded Plan and inside a
CUDA graph, equal bit for bit to the same launch with dependent launches off."""

from __future__ import annotations

import pytest
import torch
from convdispatch.dispatcher import registry
from convdispatch.dispatcher.launch import empty_grad, empty_output, launch, launch_grad
from convdispatch.kernels import dependent
from convdispatch.kernels.device import spec_of
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.validation.inputs import grad_reference, make_grad_output, make_inputs
from convdispatch.validation.timing import graph_of

pytestmark = pytest.mark.gpu

CASES = {
    # 4-channel groups split 16 ways or more, a dense 28x28 wgrad, a batch-1 forward
    "wgrad_grouped_flat": ("wgrad", ConvGeometry(n=32, c=128, k=128, g=32, h=28, w=28, r=3,
                                                 s=3, pad=(0, 1, 1))),
    "wgrad_gemm": ("wgrad", ConvGeometry(n=8, c=64, k=64, h=28, w=28, r=3, s=3,
                                         pad=(0, 1, 1))),
    "splitk": ("forward", ConvGeometry(n=1, c=512, k=512, h=7, w=7, r=3, s=3, pad=(0, 1, 1),
                                       layout="channels_last")),
}


def _split_candidate(family: str, direction: str, geom: ConvGeometry):
    cands = registry.candidates(geom, spec_of("cuda"), direction)
    return next(c for c in cands if c.family == family and c.config["SPLIT_K"] > 8)


@pytest.mark.parametrize("family", sorted(CASES))
def test_dependent_reduction_is_bitwise_the_same(family):
    direction, g = CASES[family]
    if not dependent.dependent_ok("cuda"):
        pytest.skip("programmatic dependent launch needs compute capability 9.0")
    cand = _split_candidate(family, direction, g)
    x, w, b = make_inputs(g, "cuda", 0)
    dy = make_grad_output(g, "cuda", 0)

    def run(out, record=False):
        if direction == "forward":
            return launch(cand, x, w, b, g, out, record=record)
        return launch_grad(cand, g, dy, x=x, w=w, out=out, record=record)

    def fresh():
        out = (empty_output(x, [g.n, g.k, *g.out_spatial[1:]], g.layout)
               if direction == "forward" else empty_grad(direction, x, w))
        return out.fill_(float("nan"))

    dependent.DEPENDENT_LAUNCH = False
    try:
        plain = fresh()
        run(plain)
    finally:
        dependent.DEPENDENT_LAUNCH = True
    eager = fresh()
    plan = run(eager, record=True)
    assert plan is not None
    # The reduction pass, never the call's first kernel, waits for the one before it.
    assert not plan.steps[0].kwargs.get("launch_pdl")
    assert any(s.kwargs.get("launch_pdl") for s in plan.steps)
    assert all(s.kwargs.get("PRIOR") for s in plan.steps if s.kwargs.get("launch_pdl"))
    replayed = fresh()
    tensors = ({"x": x, "w": w, "out": replayed, "bias": b, "residual": None}
               if direction == "forward" else {"dy": dy, "x": x, "w": w, "out": replayed})
    assert plan.run(tensors, x.device)
    captured = fresh()
    replay = graph_of(lambda: run(captured))  # warmed up off the capture
    assert replay is not None
    captured.fill_(float("nan"))
    replay()
    torch.cuda.synchronize()
    if direction == "forward":
        ref = torch.nn.functional.conv2d(x.double(), w.double(),
                                         None if b is None else b.double(), padding=1)
    else:
        ref = grad_reference(g, direction, dy, x, w).double()
    assert float((plain.double() - ref).norm() / ref.norm()) < 1e-2
    for got in (eager, replayed, captured):
        assert torch.equal(got, plain)
