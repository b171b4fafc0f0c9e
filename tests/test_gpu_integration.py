"""CUDA graphs, torch.compile (inductor) and replace_convs on real models, on a GPU.

Run with ``CONVDISPATCH_GPU_TESTS=1 python -m pytest tests/test_gpu_integration.py``.
"""

from __future__ import annotations

import copy

import convdispatch as cd
import pytest
import torch
import torch.nn.functional as F
from convdispatch.dispatcher import CACHE, api, clear_cache
from convdispatch.dispatcher.replace import count_convs
from torch import nn

pytestmark = pytest.mark.gpu

CL = torch.channels_last


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    out, ref = out.double(), ref.double()
    if not torch.isfinite(out).all():
        return float("inf")
    return float((out - ref).norm() / ref.norm().clamp_min(1e-30))


class Net(nn.Module):
    """Dense, 1x1, grouped, depthwise and strided convs, a fused epilogue and a residual."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = cd.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.pw = cd.Conv2d(64, 128, 1)
        self.grouped = cd.Conv2d(128, 128, 3, padding=1, groups=8)
        self.dw = cd.Conv2d(128, 128, 3, padding=1, groups=128)
        self.down = cd.Conv2d(128, 256, 3, stride=2, padding=1)
        self.w = nn.Parameter(torch.randn(256, 256, 3, 3) / 48)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.stem(x))
        y = F.relu(self.pw(y))
        y = self.dw(F.relu(self.grouped(y))) + y
        y = F.relu(self.down(y))
        return cd.conv2d(y, self.w, None, padding=1, activation="relu", residual=y)


def _net(dtype=torch.float16) -> nn.Module:
    torch.manual_seed(0)
    return Net().cuda().to(dtype=dtype, memory_format=CL).eval()


def _choices() -> dict:
    return {key: dec.candidate.id for key, dec in CACHE.items()}


def test_cuda_graph_capture_replays_the_eager_choice():
    model = _net()
    x = torch.randn(4, 3, 64, 64, device="cuda", dtype=torch.float16).to(memory_format=CL)
    clear_cache()
    with torch.no_grad():
        eager = model(x)  # chooses kernels and records plans
        before, misses, plans = _choices(), CACHE.misses, len(api.PLANS)
        first = cd.explain(x, model.stem.weight, None, 2, 3)
        static_x = x.clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            model(static_x)  # warm-up on a side stream, as torch's docs ask
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = model(static_x)
        x2 = torch.randn_like(x)
        static_x.copy_(x2)
        graph.replay()
        torch.cuda.synchronize()
        eager2 = model(x2)
        again = cd.explain(x, model.stem.weight, None, 2, 3)
    assert torch.equal(static_out, eager2), "the graph replays exactly the eager kernels"
    assert not torch.equal(eager, eager2)
    assert _choices() == before and CACHE.misses == misses and len(api.PLANS) == plans
    assert first.fallback is None and first.candidate.id in before.values()
    assert again.candidate == first.candidate


@pytest.mark.parametrize("mode", ["default", "reduce-overhead"])
def test_compile_inductor_fullgraph_matches_eager(mode):
    torch._dynamo.reset()
    model = _net()
    x = torch.randn(2, 3, 64, 64, device="cuda", dtype=torch.float16).to(memory_format=CL)
    with torch.no_grad():
        eager = model(x)
        compiled = torch.compile(model, fullgraph=True, mode=mode)
        for _ in range(3):  # reduce-overhead records its CUDA graph on a later call
            out = compiled(x)
        torch.cuda.synchronize()
    assert out.shape == eager.shape and out.stride() == eager.stride()
    assert rel_err(out, eager) < 5e-3
    torch._dynamo.reset()


def test_compile_inductor_training_step_matches_eager():
    """Inductor compiles the forward operator and the gradient operator of its autograd
    formula; gradients equal eager convdispatch's."""
    torch._dynamo.reset()
    model = _net(torch.float32).train()
    twin = copy.deepcopy(model)
    x = torch.randn(2, 3, 64, 64, device="cuda").to(memory_format=CL)
    torch.compile(model, fullgraph=True)(x).square().mean().backward()
    twin(x).square().mean().backward()
    torch.cuda.synchronize()
    for (name, p), q in zip(model.named_parameters(), twin.parameters()):
        assert p.grad is not None and rel_err(p.grad, q.grad) < 1e-3, name
    torch._dynamo.reset()


def _torchvision_model(name: str) -> nn.Module:
    pytest.importorskip("torchvision")
    from convdispatch.validation.bench_models import build

    return build(name, torch.float32)[0]


@pytest.mark.parametrize("name", ["resnet50", "mobilenet_v2"])
def test_replace_convs_torchvision_fp16_channels_last(name):
    model = _torchvision_model(name)
    ref32 = copy.deepcopy(model)
    torch16 = copy.deepcopy(model).cuda().half().to(memory_format=CL)
    ours = cd.replace_convs(copy.deepcopy(model)).cuda().half().to(memory_format=CL)
    ours_n, left = count_convs(ours)
    assert ours_n > 20 and left == 0
    x = torch.randn(2, 3, 224, 224, device="cuda").to(memory_format=CL)
    with torch.no_grad():
        ref = ref32(x)
        theirs = torch16(x.half())
        out = ours(x.half())
    assert out.dtype == torch.float16 and out.shape == ref.shape
    torch_err = rel_err(theirs, ref)
    assert rel_err(out, ref) < max(3 * torch_err, 1e-2), (rel_err(out, ref), torch_err)


def test_offsets_past_int32_on_a_real_tensor():
    """A 2.15e9-element input: the last rows are only reachable with 64-bit offsets."""
    torch.manual_seed(0)
    x = torch.randn(2, 64, 4100, 4100, device="cuda", dtype=torch.float16).to(memory_format=CL)
    assert x.numel() > 2**31
    for w, kw in [(torch.randn(64, 64, 1, 1), {}), (torch.randn(64, 64, 3, 3) / 24,
                                                   dict(padding=1))]:
        w = w.to(device="cuda", dtype=torch.float16).to(memory_format=CL)
        with torch.no_grad():
            out = cd.conv2d(x, w, **kw)
            tail = slice(-16, None)
            ref = F.conv2d(x[1:, :, tail.start - 2:].float(), w.float(), **kw)[:, :, -16:]
        assert rel_err(out[1:, :, tail], ref) < 5e-3
        del out
        torch.cuda.empty_cache()


def test_replayed_plans_launch_compiled_kernels_directly():
    """A repeat call's recorded launches go straight to the compiled kernels (no Triton
    argument binding) and give the bits Triton's own path gives; an input 2 bytes off a
    16-byte boundary, with the same strides, goes Triton's way and is right too."""
    from convdispatch.kernels import launcher

    clear_cache()
    gen = torch.Generator(device="cuda").manual_seed(0)
    w = torch.randn(64, 32, 3, 3, device="cuda", generator=gen, dtype=torch.float16)
    base = torch.randn(2 * 32 * 28 * 28 + 1, device="cuda", generator=gen,
                       dtype=torch.float16)
    x = base[: 2 * 32 * 28 * 28].view(2, 32, 28, 28)
    off = base[1:].view(2, 32, 28, 28)  # the same strides, 2 bytes past the boundary
    cd.conv2d(x, w, padding=1)  # records the plan
    plans = [e[0] for e in api.PLANS.values() if e and e[0] is not None]
    assert plans and all(s.fast is not None for p in plans for s in p.steps)
    direct = cd.conv2d(x, w, padding=1)
    launcher.FAST_REPLAY = False
    try:
        by_triton = cd.conv2d(x, w, padding=1)
        off_by_triton = cd.conv2d(off, w, padding=1)
    finally:
        launcher.FAST_REPLAY = True
    off_direct = cd.conv2d(off, w, padding=1)
    assert torch.equal(direct, by_triton) and torch.equal(off_direct, off_by_triton)
    ref = F.conv2d(off.float(), w.float(), padding=1)
    assert float((off_direct.float() - ref).norm() / ref.norm()) < 1e-2


TMA_FAMILIES = ["implicit_gemm_tma", "implicit_gemm_tma_persistent", "pointwise_tma",
                "pointwise_tma_persistent", "dgrad_implicit_gemm_tma", "dgrad_pointwise_tma",
                "wgrad_implicit_gemm_tma", "wgrad_pointwise_tma", "wgrad_staged_tma"]


@pytest.mark.parametrize("family", TMA_FAMILIES)
def test_tma_plans_replay_with_new_descriptors(family):
    """A TMA family's recorded plan replays on new tensors through the compiled kernel
    (descriptors made again from their recipes; the same bits as Triton's own launch),
    inside a CUDA graph capture too; an unaligned input goes the checked path, which
    records a plan of its own for that alignment."""
    from convdispatch.dispatcher import autograd as A
    from convdispatch.dispatcher import registry, set_chooser
    from convdispatch.kernels import launcher
    from convdispatch.kernels.geometry import ConvGeometry
    from helpers import PickFamily, unaligned

    r = 1 if "pointwise" in family else 3
    geom = ConvGeometry(n=2, c=64, k=64, h=14, w=14, r=r, s=r, pad=(0, r // 2, r // 2),
                        dtype="float16")
    direction = registry.family(family).direction
    plans = api.PLANS if direction == "forward" else api.GRAD_PLANS

    def inputs(seed):
        gen = torch.Generator(device="cuda").manual_seed(seed)
        x, dy = (torch.randn(2, 64, 14, 14, device="cuda", generator=gen, dtype=torch.float16)
                 .to(memory_format=CL) for _ in range(2))
        w = (torch.randn(64, 64, r, r, device="cuda", generator=gen, dtype=torch.float16)
             / (8 * r)).to(memory_format=CL)
        return x, w, dy

    def ours(x, w, dy):
        if direction == "forward":
            return cd.conv2d(x, w, padding=r // 2)
        return A.gradient(geom, direction, dy, x, w)

    def ref(x, w, dy):
        if direction == "forward":
            return F.conv2d(x.float(), w.float(), padding=r // 2)
        return A.torch_grad(geom, direction, dy.float(), x.float(), w.float())

    clear_cache()
    set_chooser(PickFamily(family))
    try:
        ours(*inputs(1))  # records the plan
        (plan,) = plans.values()
        plan = plan[0] if direction == "forward" else plan
        assert any(rc is not None for s in plan.steps for *_, rc in s.slots)
        assert all(s.fast is not None for s in plan.steps)
        new = inputs(2)
        direct = ours(*new)
        launcher.FAST_REPLAY = False
        try:
            by_triton = ours(*new)
        finally:
            launcher.FAST_REPLAY = True
        assert torch.equal(direct, by_triton)
        assert rel_err(direct, ref(*new)) < 1e-2
        x, w, dy = inputs(3)
        odd = ours(unaligned(x), w, unaligned(dy))
        assert rel_err(odd, ref(x, w, dy)) < 1e-2
        static = inputs(4)
        ours(*static)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = ours(*static)
        for t, v in zip(static, inputs(5)):
            t.copy_(v)
        graph.replay()
        torch.cuda.synchronize()
        assert rel_err(captured, ref(*static)) < 1e-2
        # One plan a 16-byte alignment of the tensors (part of a plan's signature): the
        # capture replayed the first, the unaligned call recorded its own.
        assert len(plans) == 2
    finally:
        set_chooser(None)
        clear_cache()

