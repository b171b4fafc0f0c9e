"""wgrad_grouped_flat's split reduction done in the kernel (its last program of a pack
adds the slices) on a GPU (run through the device tool): against torch, the same bits
every run, eager, replayed from a recorded Plan and in CUDA graphs replayed at once on two
streams, and every arrival counter zero again afterwards."""

from __future__ import annotations

import pytest
import torch
from convdispatch.dispatcher import registry
from convdispatch.dispatcher.launch import launch_grad
from convdispatch.kernels import arrivals, wgrad_grouped_flat
from convdispatch.kernels.device import spec_of
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.kernels.wgrad_gemm import split_steps
from convdispatch.validation.inputs import grad_reference, make_grad_output, make_inputs

pytestmark = pytest.mark.gpu

CASES = {  # ResNeXt-50 layer4.1 and layer2.1 at batch 32
    "cg32_7x7": ConvGeometry(n=32, c=1024, k=1024, g=32, h=7, w=7, r=3, s=3, pad=(0, 1, 1)),
    "cg8_28x28": ConvGeometry(n=32, c=256, k=256, g=32, h=28, w=28, r=3, s=3,
                              pad=(0, 1, 1)),
}


def _counters_zero() -> bool:
    torch.cuda.synchronize()
    bufs = list(arrivals._by_stream.values()) + [p[0] for p in arrivals._pools.values()]
    return all(int(b.abs().sum()) == 0 for b in bufs)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_split_reduction(case):
    g = CASES[case]
    fam = registry.family("wgrad_grouped_flat")
    cands = [c for c in fam.candidates(g, spec_of("cuda")) if 1 < split_steps(
        fam.grid(g, c.config).k_steps, c.config["SPLIT_K"])[1] <= wgrad_grouped_flat.FUSED_SLICES]
    assert cands, g.describe()
    cand = cands[-1]
    x, w, _ = make_inputs(g, "cuda", 0)
    dy = make_grad_output(g, "cuda", 0)
    ref = grad_reference(g, "wgrad", dy, x, w).double()
    fresh = lambda: torch.full_like(w, float("nan"))  # noqa: E731

    def run(out, record=False):
        return launch_grad(cand, g, dy, x=x, w=w, out=out, record=record)

    was = wgrad_grouped_flat.FUSED_SLICES
    wgrad_grouped_flat.FUSED_SLICES = 0
    try:
        passed = fresh()
        run(passed)
    finally:
        wgrad_grouped_flat.FUSED_SLICES = was
    fused = fresh()
    plan = run(fused, record=True)
    assert plan is not None and any(s.counters for s in plan.scratch)
    assert float((fused.double() - ref).norm() / ref.norm()) < 1e-2
    # The same sums in another order: float16 roundings of a few elements differ.
    assert float((fused.double() - passed.double()).norm() / ref.norm()) < 1e-4
    for _ in range(3):
        again = fresh()
        run(again)
        assert torch.equal(again, fused)
    replayed = fresh()
    assert plan.run({"dy": dy, "x": x, "w": w, "out": replayed}, dy.device)
    assert torch.equal(replayed, fused) and _counters_zero()
    outs, graphs = [fresh(), fresh()], [torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        run(outs[0])  # warm-up off the capture
    torch.cuda.current_stream().wait_stream(side)
    for out, graph in zip(outs, graphs):
        with torch.cuda.graph(graph):
            run(out)
        out.fill_(float("nan"))
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    for s in streams:
        s.wait_stream(torch.cuda.current_stream())
    for _ in range(20):
        for s, graph in zip(streams, graphs):
            with torch.cuda.stream(s):
                graph.replay()
    for s in streams:
        torch.cuda.current_stream().wait_stream(s)
    assert all(torch.equal(out, fused) for out in outs)
    assert _counters_zero()
