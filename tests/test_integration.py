"""torch.compile / torch.export through convdispatch::conv, and replace_convs(), interpreted."""

from __future__ import annotations

import copy
import warnings

import convdispatch as cd
import pytest
import torch
import torch.nn.functional as F
from convdispatch.dispatcher import CACHE, clear_cache
from convdispatch.dispatcher.replace import count_convs
from helpers import rel_err
from torch import nn

TOL32 = 2e-3
OP = torch.ops.convdispatch.conv.default


def _cl(t: torch.Tensor) -> torch.Tensor:
    return t.to(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)


class FusedBlock(nn.Module):
    """Our module, the functional API with a fused epilogue, a padded module, plain torch ops."""

    def __init__(self) -> None:
        super().__init__()
        self.a = cd.Conv2d(8, 16, 3, padding=1)
        self.b = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.dw = cd.Conv2d(16, 16, 3, padding=1, groups=16, padding_mode="reflect")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.a(x)
        y = cd.conv2d(y, self.b.weight, None, padding="same", activation="relu", residual=y)
        return torch.sigmoid(self.dw(y)) * 2


def _reference(m: FusedBlock, x: torch.Tensor) -> torch.Tensor:
    y = F.conv2d(x, m.a.weight, m.a.bias, padding=1)
    y = F.relu(F.conv2d(y, m.b.weight, padding="same") + y)
    y = F.conv2d(F.pad(y, (1, 1, 1, 1), mode="reflect"), m.dw.weight, m.dw.bias, groups=16)
    return torch.sigmoid(y) * 2


def _recording_backend(graphs: list):
    from torch._dynamo.backends.registry import lookup_backend

    aot_eager = lookup_backend("aot_eager")

    def backend(gm, example_inputs):
        graphs.append(gm)
        return aot_eager(gm, example_inputs)

    return backend


def _op_calls(graphs) -> int:
    return sum(node.target in (torch.ops.convdispatch.conv, OP)
               for gm in graphs for node in gm.graph.nodes)


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("cl", [True, False])
def test_compile_fullgraph_runs_our_kernels_and_matches_eager(cl):
    m = FusedBlock().eval()
    x = torch.randn(2, 8, 6, 6)
    x = _cl(x) if cl else x
    graphs: list = []
    clear_cache()
    with torch.no_grad():
        out = torch.compile(m, backend=_recording_backend(graphs), fullgraph=True)(x)
        assert len(CACHE) == 3, "the compiled graph chose kernels for the three convolutions"
        eager = m(x)
        ref = _reference(m, x)
    assert len(graphs) == 1 and _op_calls(graphs) == 3
    assert torch.equal(out, eager), "compiled and eager run the same kernels"
    assert out.stride() == eager.stride()
    assert rel_err(out, ref.double()) < TOL32


def test_compile_explain_reports_no_graph_break():
    m = FusedBlock().eval()
    with torch.no_grad():
        info = torch._dynamo.explain(m)(torch.randn(1, 8, 5, 5))
    assert info.graph_count == 1 and info.graph_break_count == 0, info.break_reasons


def test_compile_dynamic_shapes_match_torch():
    w, b = torch.randn(4, 8, 3, 3) / 5, torch.randn(4)
    f = torch.compile(lambda x: cd.conv2d(x, w, b, stride=2, padding=1, activation="silu"),
                      backend="aot_eager", dynamic=True, fullgraph=True)
    with torch.no_grad():
        for n, h in [(1, 5), (3, 7), (2, 10)]:
            x = torch.randn(n, 8, h, h + 1)
            ref = F.silu(F.conv2d(x.double(), w.double(), b.double(), stride=2, padding=1))
            assert rel_err(f(x), ref) < TOL32


def test_compile_conv3d_unbatched_and_epilogue():
    w = torch.randn(8, 4, 1, 3, 3) / 6
    res = torch.randn(8, 3, 4, 4)
    f = torch.compile(lambda x, r: cd.conv3d(x, w, None, 1, (0, 1, 1), activation="gelu",
                                             residual=r), backend="aot_eager", fullgraph=True)
    x = torch.randn(4, 3, 4, 4)  # unbatched (C, D, H, W)
    with torch.no_grad():
        out = f(x, res)
    ref = F.gelu(F.conv3d(x.double(), w.double(), padding=(0, 1, 1)) + res.double())
    assert out.shape == ref.shape and rel_err(out, ref) < TOL32


@pytest.mark.parametrize("activation", [None, "relu6", "silu"])
def test_compile_with_autograd_runs_our_gradient_kernels(activation, monkeypatch):
    """A compiled training step runs convdispatch's forward and dgrad/wgrad kernels and
    gives torch's gradients (input, weight, bias, residual)."""
    from convdispatch.dispatcher import autograd

    seen, real = [], autograd.gradient

    def spy(*args):
        seen.append(args[1])
        return real(*args)

    monkeypatch.setattr(autograd, "gradient", spy)
    torch.manual_seed(0)
    x = torch.randn(2, 8, 5, 5, requires_grad=True)
    w = (torch.randn(4, 8, 3, 3) / 5).requires_grad_()
    b = torch.randn(4, requires_grad=True)
    r = torch.randn(2, 4, 3, 3, requires_grad=True)
    graphs: list = []
    f = torch.compile(lambda x, w, b, r: cd.conv2d(x, w, b, stride=2, padding=1, residual=r,
                                                   activation=activation),
                      backend=_recording_backend(graphs), fullgraph=True)
    grads = torch.autograd.grad(f(x, w, b, r).square().sum(), (x, w, b, r))
    assert _op_calls(graphs) == 1, "the forward graph holds the operator, not torch's conv"
    assert sorted(seen) == ["dgrad", "wgrad"], "the backward ran the gradient kernels"
    ref_in = [t.detach().double().requires_grad_() for t in (x, w, b, r)]
    fn = {None: lambda t: t, "relu6": F.relu6, "silu": F.silu}[activation]
    y = fn(F.conv2d(ref_in[0], ref_in[1], ref_in[2], stride=2, padding=1) + ref_in[3])
    for got, want in zip(grads, torch.autograd.grad(y.square().sum(), ref_in)):
        assert rel_err(got, want) < TOL32


def test_compiled_module_trains_like_eager():
    torch.manual_seed(0)
    m = nn.Sequential(cd.Conv2d(8, 4, 3, padding=1), nn.ReLU(), cd.Conv2d(4, 4, 3, groups=4))
    twin = copy.deepcopy(m)
    x = torch.randn(2, 8, 5, 5)
    torch.compile(m, backend="aot_eager", fullgraph=True)(x).square().sum().backward()
    twin(x).square().sum().backward()
    for p, q in zip(m.parameters(), twin.parameters()):
        assert torch.allclose(p.grad, q.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", ["contiguous", "channels_last", "unbatched", "float64_same",
                                  "grouped_stride2"])
@pytest.mark.parametrize("direction", ["dgrad", "wgrad"])
def test_opcheck_gradient_operator(case, direction):
    """The gradient operator: schema, fake vs real (shape, dtype, strides), aot tracing."""
    x, w = torch.randn(2, 8, 5, 5), torch.randn(4, 8, 3, 3) / 5
    wg = torch.randn(8, 2, 3, 3) / 5
    args = {
        "contiguous": (torch.randn(2, 4, 5, 5), x, w, [1], [1], [1], 1, "", 2),
        "channels_last": (_cl(torch.randn(2, 4, 3, 3)), _cl(x), _cl(w), [1], [0], [1], 1, "", 2),
        "unbatched": (torch.randn(4, 5, 5), x[0], w, [1], [1], [1], 1, "", 2),
        "float64_same": (torch.randn(2, 4, 5, 5).double(), x.double(), w.double(), [1], [],
                         [1], 1, "same", 2),
        "grouped_stride2": (torch.randn(2, 8, 3, 3), x, wg, [2], [1], [1], 4, "", 2),
    }[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.FallbackWarning)
        torch.library.opcheck(torch.ops.convdispatch.conv_grad, (*args, direction))


def test_compile_reports_bad_arguments_while_tracing():
    w = torch.randn(4, 3, 3, 3)
    f = torch.compile(lambda x: cd.conv2d(x, w), backend="aot_eager", fullgraph=True)
    with torch.no_grad(), pytest.raises(RuntimeError, match="channels"):
        f(torch.randn(1, 5, 6, 6))


@pytest.mark.parametrize("case", ["contiguous", "channels_last", "unbatched", "float64_same",
                                  "residual_stride2"])
def test_opcheck(case):
    """torch.library.opcheck: schema, fake vs real (shape, dtype, strides), aot tracing."""
    x, w, b = torch.randn(2, 8, 5, 5), torch.randn(4, 8, 3, 3) / 5, torch.randn(4)
    args = {
        "contiguous": (x, w, b, [1], [1], [1], 1, "relu", None, "", 2),
        "channels_last": (_cl(x), _cl(w), None, [1, 2], [0, 1], [1], 1, "none", None, "", 2),
        "unbatched": (x[0], w, b, [1], [1], [1], 1, "gelu", None, "", 2),
        "float64_same": (x.double(), w.double(), None, [1], [], [1], 1, "none", None, "same", 2),
        "residual_stride2": (_cl(x), w, b, [2], [0], [1], 1, "relu6",
                             _cl(torch.randn(2, 4, 2, 2)), "", 2),
    }[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.FallbackWarning)
        torch.library.opcheck(OP, args)


def test_export_holds_the_operator_and_runs():
    m = nn.Sequential(cd.Conv2d(8, 4, 3, stride=2), nn.ReLU()).eval()
    x = torch.randn(1, 8, 7, 7)
    with torch.no_grad():
        ep = torch.export.export(m, (x,))
        assert any(n.target == OP for n in ep.graph.nodes)
        out = ep.module()(x)
        ref = F.relu(F.conv2d(x.double(), m[0].weight.double(), m[0].bias.double(), stride=2))
    assert rel_err(out, ref) < TOL32


# --- replace_convs ------------------------------------------------------------------------
class Bottleneck(nn.Module):
    def __init__(self, c: int, mid: int) -> None:
        super().__init__()
        self.reduce = nn.Conv2d(c, mid, 1, bias=False)  # 1x1
        self.bn1 = nn.BatchNorm2d(mid)
        self.grouped = nn.Conv2d(mid, mid, 3, padding=1, groups=4, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.depthwise = nn.Conv2d(mid, mid, 3, padding=1, groups=mid)
        self.expand = nn.Conv2d(mid, c, 1)

    def forward(self, x):
        y = F.relu(self.bn1(self.reduce(x)))
        y = F.relu(self.bn2(self.grouped(y)))
        return F.relu(self.expand(F.relu6(self.depthwise(y))) + x)


class SubclassConv(nn.Conv2d):
    """A user's conv with its own forward: replace_convs must not touch it."""

    def forward(self, x):
        return super().forward(x) * 0.5


def tiny_resnet() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        Bottleneck(16, 8),
        nn.Sequential(Bottleneck(16, 8), nn.Conv2d(16, 16, 3, padding=1, padding_mode="reflect")),
        SubclassConv(16, 16, 1),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5),
    ).eval()


def _randomize_bn(model: nn.Module) -> None:
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)


def test_replace_convs_matches_torch_and_keeps_parameters():
    model = tiny_resnet()
    _randomize_bn(model)
    x = torch.randn(2, 3, 12, 12)
    with torch.no_grad():
        ref = model.double()(x.double())
    model.float()
    keys = list(model.state_dict())
    params = {n: p for n, p in model.named_parameters()}
    hooked = []
    model[3].reduce.register_forward_hook(lambda mod, i, o: hooked.append(o.shape))
    same = cd.replace_convs(model)
    assert same is model
    assert count_convs(model) == (10, 1), "10 convs swapped, the subclass left"
    assert type(model[5]) is SubclassConv
    assert isinstance(model[3].grouped, cd.Conv2d) and isinstance(model[4][1], cd.Conv2d)
    assert list(model.state_dict()) == keys
    assert all(p is params[n] for n, p in model.named_parameters())
    assert not model.training and not model[3].reduce.training
    clear_cache()
    with torch.no_grad():
        out = model(x)
    assert len(CACHE) >= 6 and hooked == [(2, 8, 6, 6)], "our kernels ran; hooks still fire"
    assert rel_err(out, ref) < TOL32
    for x_ in (x, _cl(x)):
        with torch.no_grad():
            assert rel_err(model(x_), ref) < TOL32


def test_replace_convs_is_idempotent_and_copy_leaves_the_original():
    model = tiny_resnet()
    copied = cd.replace_convs(model, inplace=False)
    assert copied is not model and count_convs(model) == (0, 11)
    assert count_convs(copied) == (10, 1)
    again = cd.dispatcher.replace_convs(copied)
    assert again is copied and count_convs(again) == (10, 1)
    assert [type(m) for m in again.modules()] == [type(m) for m in copied.modules()]
    for (k1, v1), (k2, v2) in zip(model.state_dict().items(), copied.state_dict().items()):
        assert k1 == k2 and torch.equal(v1, v2) and v1.data_ptr() != v2.data_ptr()


def test_replace_convs_shared_conv3d_root_and_training_flag():
    shared = nn.Conv3d(4, 4, 3, padding=1)
    model = nn.Sequential(shared, nn.ReLU(), shared).train()
    cd.replace_convs(model)
    assert isinstance(model[0], cd.Conv3d) and model[0] is model[2] and model.training
    root = cd.replace_convs(nn.Conv2d(4, 8, 1))
    assert type(root) is cd.Conv2d
    lazy = nn.LazyConv2d(8, 3)
    assert type(cd.replace_convs(lazy)) is nn.LazyConv2d, "uninitialised lazy convs are left"
    x = torch.randn(1, 4, 3, 4, 4)
    with torch.no_grad():
        ref = F.conv3d(F.relu(F.conv3d(x.double(), shared.weight.double(), shared.bias.double(),
                                       padding=1)), shared.weight.double(),
                       shared.bias.double(), padding=1)
        assert rel_err(model(x), ref) < TOL32


def test_replaced_model_compiles_fullgraph():
    model = cd.replace_convs(tiny_resnet())
    x = torch.randn(1, 3, 10, 10)
    graphs: list = []
    with torch.no_grad():
        eager = model(x)
        out = torch.compile(model, backend=_recording_backend(graphs), fullgraph=True)(x)
    assert _op_calls(graphs) == 10
    assert torch.allclose(out, eager, rtol=1e-5, atol=1e-6)


def test_replace_convs_rejects_bad_arguments():
    with pytest.raises(TypeError, match="nn.Module"):
        cd.replace_convs(torch.randn(3))
    with pytest.raises(TypeError, match="inplace"):
        cd.replace_convs(nn.Conv2d(1, 1, 1), inplace="no")


def test_replace_convs_torchvision_resnet18():
    models = pytest.importorskip("torchvision.models")
    model = models.resnet18(weights=None).eval()
    ref_model = copy.deepcopy(model)
    cd.replace_convs(model)
    assert count_convs(model) == (20, 0)
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        assert rel_err(model(x), ref_model.double()(x.double())) < 1e-2


# --- the end-to-end benchmark's plumbing (the benchmark itself needs a GPU) ----------------
def test_bench_models_report_and_cli_without_gpu(tmp_path, monkeypatch):
    from convdispatch.validation import bench_models as bm

    rows = [dict(model="resnet50", batch=1, convs_ours=53, torch_us=1500.0, ours_us=1200.0,
                 speedup=1.25, torch_eager_us=3000.0, ours_eager_us=2500.0, rel_err_ours=2e-3,
                 rel_err_torch=1e-3, families="implicit_gemm=20;pointwise=10"),
            dict(model="mobilenet_v2", batch=32, error="RuntimeError: boom")]
    env = dict(dtype="float16", gpu="H100", torch="2.11", torchvision="0.26", triton="3.6",
               cuda="12.8", date="today", command="python -m ...")
    md = bm.summary_md(rows, env)
    assert "| resnet50 | 1 | 53 | 1.500 | 1.200 | 1.25 |" in md
    assert "failed: RuntimeError: boom" in md and "Geomean speedup over torch" in md
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match="CUDA"):
        bm.main(["--out", str(tmp_path)])
    with pytest.raises(SystemExit):
        bm.main(["--out", str(tmp_path), "--batches", "one"])


def test_operator_gradcheck():
    """The operator's registered autograd formula in float64: bias, residual, ReLU mask."""
    torch.manual_seed(1)
    x = torch.randn(1, 4, 4, 3, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 2, 3, 2, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)
    r = torch.randn(1, 4, 2, 2, dtype=torch.float64, requires_grad=True)

    def f(x, w, b, r):
        return torch.ops.convdispatch.conv(x, w, b, [1], [0], [1], 2, "relu", r, "", 2)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.FallbackWarning)
        assert torch.autograd.gradcheck(f, (x, w, b, r), fast_mode=True)


def test_demo_runs_every_forward_family(capsys, clean_dispatcher):
    """`make demo`'s layers reach each registered forward family that the interpreter runs
    (the Gluon ones run on GPUs only: tests/test_gpu_families.py)."""
    import re

    from convdispatch.dispatcher import demo_cli, registry

    assert demo_cli._run_layers()
    shown = set(re.findall(r"(\S+)\s+rel err", capsys.readouterr().out))
    assert shown == {f.name for f in registry.families() if f.interpreted}
    assert {f.name for f in registry.families() if not f.interpreted} == {"grouped_flat"}
