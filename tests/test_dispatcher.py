"""The torch-style API, modules, explain(), forcing, caching and bad input, on the interpreter."""

from __future__ import annotations

import subprocess
import sys
import threading
import warnings

import convdispatch as cd
import pytest
import torch
import torch.nn.functional as F
from convdispatch.dispatcher import CACHE, api, clear_cache, registry
from convdispatch.kernels.geometry import ConvGeometry
from helpers import rel_err
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TOL32 = 2e-3


def _rand(*shape, cl=False, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(*shape, generator=g).to(dtype)
    if cl:
        t = t.to(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)
    return t


def _ref(dims, x, w, b=None, **kw):
    fn = F.conv2d if dims == 2 else F.conv3d
    return fn(x.double(), w.double(), None if b is None else b.double(), **kw)


@pytest.mark.parametrize("kw", [
    dict(stride=1, padding=1), dict(stride=2, padding=(1, 0)), dict(padding="same"),
    dict(padding="valid"), dict(dilation=2, padding=2), dict(stride=(2, 1), padding=0),
])
@pytest.mark.parametrize("cl", [True, False])
def test_conv2d_matches_torch(kw, cl):
    x = _rand(2, 32, 7, 6, cl=cl)
    w = _rand(16, 32, 3, 3, seed=1) / 10
    b = _rand(16, seed=2)
    out = cd.conv2d(x, w, b, **kw)
    assert rel_err(out, _ref(2, x, w, b, **kw)) < TOL32
    fmt = torch.channels_last if cl else torch.contiguous_format
    assert out.is_contiguous(memory_format=fmt), "output keeps the input's memory format"


def test_same_padding_even_kernel_is_asymmetric_like_torch():
    x = _rand(1, 32, 6, 6)
    w = _rand(8, 32, 4, 2, seed=1) / 10
    out = cd.conv2d(x, w, padding="same")
    ref = _ref(2, x, w, padding="same")
    assert out.shape == ref.shape and rel_err(out, ref) < TOL32


@pytest.mark.parametrize("groups,cin,cout", [(4, 32, 64), (16, 16, 16), (8, 8, 16), (2, 64, 32)])
def test_grouped_and_depthwise(groups, cin, cout):
    x = _rand(2, cin, 6, 6, cl=True)
    w = _rand(cout, cin // groups, 3, 3, seed=1) / 4
    out = cd.conv2d(x, w, None, 1, 1, 1, groups)
    assert rel_err(out, _ref(2, x, w, padding=1, groups=groups)) < TOL32


def test_conv3d_and_unbatched_input():
    x = _rand(1, 16, 3, 5, 5, cl=True)
    w = _rand(8, 16, 3, 1, 3, seed=1) / 6
    out = cd.conv3d(x, w, stride=(1, 2, 1), padding=(1, 0, 1))
    assert rel_err(out, _ref(3, x, w, stride=(1, 2, 1), padding=(1, 0, 1))) < TOL32
    xu = _rand(32, 6, 6)
    w2 = _rand(16, 32, 3, 3, seed=3) / 10
    out = cd.conv2d(xu, w2, padding=1)
    assert out.shape == (16, 6, 6)
    assert rel_err(out, _ref(2, xu.unsqueeze(0), w2, padding=1)[0]) < TOL32


@pytest.mark.parametrize("activation", ["relu", "relu6", "gelu", "silu"])
def test_fused_epilogue(activation):
    x = _rand(2, 32, 5, 5, cl=True)
    w = _rand(32, 32, 3, 3, seed=1) / 10
    b = _rand(32, seed=2)
    res = _rand(2, 32, 5, 5, seed=3, cl=True)
    out = cd.conv2d(x, w, b, padding=1, activation=activation, residual=res)
    ref = getattr(F, activation)(_ref(2, x, w, b, padding=1) + res.double())
    assert rel_err(out, ref) < TOL32


def test_nan_propagates_like_torch():
    x = _rand(1, 32, 4, 4, cl=True)
    x[0, 3, 1, 1] = float("nan")
    w = _rand(16, 32, 3, 3, seed=1)
    out = cd.conv2d(x, w, padding=1, activation="relu")
    ref = F.relu(F.conv2d(x, w, padding=1))
    assert torch.equal(torch.isnan(out), torch.isnan(ref)) and torch.isnan(out).any()


def test_zero_size_batch_gives_empty_output():
    out = cd.conv2d(torch.randn(0, 32, 6, 6), torch.randn(16, 32, 3, 3), padding=1)
    assert out.shape == (0, 16, 6, 6)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_geometries_match_torch(data):
    """Property: for any valid small geometry the chosen kernel matches torch."""
    dims = data.draw(st.sampled_from([2, 2, 3]))
    groups = data.draw(st.sampled_from([1, 1, 2, 4]))
    cg = data.draw(st.sampled_from([1, 3, 8, 16, 33]))
    kg = data.draw(st.sampled_from([1, 4, 16, 24]))
    ks = tuple(data.draw(st.integers(1, 3)) for _ in range(dims))
    stride = tuple(data.draw(st.integers(1, 2)) for _ in range(dims))
    dil = tuple(data.draw(st.integers(1, 2)) for _ in range(dims))
    pad = tuple(data.draw(st.integers(0, 1)) for _ in range(dims))
    sizes = tuple(data.draw(st.integers(max(3, d * (k - 1) + 1), 7)) for k, d in zip(ks, dil))
    if dims == 3:
        # A shallow depth keeps the interpreter fast, but the dilated filter must fit.
        sizes = (max(min(sizes[0], 3), dil[0] * (ks[0] - 1) + 1),) + sizes[1:]
    cl = data.draw(st.booleans())
    n = data.draw(st.integers(1, 2))
    x = _rand(n, cg * groups, *sizes, cl=cl)
    w = _rand(kg * groups, cg, *ks, seed=1) / 4
    fn = cd.conv2d if dims == 2 else cd.conv3d
    out = fn(x, w, None, stride, pad, dil, groups)
    ref = _ref(dims, x, w, stride=stride, padding=pad, dilation=dil, groups=groups)
    assert out.shape == ref.shape
    assert rel_err(out, ref) < TOL32


# --- bad input: the same exception type as torch, with a message naming the problem ------
BAD = {
    "input rank": (lambda f: f(torch.randn(1, 2, 4, 8, 8), torch.randn(8, 4, 3, 3)), "input"),
    "weight rank": (lambda f: f(torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3)), ""),
    "groups not dividing": (lambda f: f(torch.randn(2, 4, 8, 8), torch.randn(8, 2, 3, 3),
                                        groups=3), "groups"),
    "channel mismatch": (lambda f: f(torch.randn(2, 4, 8, 8), torch.randn(8, 3, 3, 3)),
                         "channels"),
    "bias size": (lambda f: f(torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3), torch.randn(7)),
                  "bias"),
    "negative padding": (lambda f: f(torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3),
                                     padding=-1), "padding"),
    "zero stride": (lambda f: f(torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3), stride=0),
                    "stride"),
    "zero groups": (lambda f: f(torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3), groups=0),
                    "groups"),
    "same with stride": (lambda f: f(torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3),
                                     stride=2, padding="same"), "same"),
    "bad padding string": (lambda f: f(torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3),
                                       padding="full"), "padding"),
    "input too small": (lambda f: f(torch.randn(2, 4, 2, 2), torch.randn(8, 4, 3, 3)),
                        "Kernel size"),
    "dtype mismatch": (lambda f: f(torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3).half()),
                       "type"),
    "bias dtype": (lambda f: f(torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3),
                               torch.randn(8).half()), "bias"),
    "not a tensor": (lambda f: f([1, 2], torch.randn(8, 4, 3, 3)), "input"),
    "stride length": (lambda f: f(torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3),
                                  stride=(1, 1, 1)), "stride"),
    "float stride": (lambda f: f(torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3),
                                 stride=1.5), "stride"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_raises_like_torch(name):
    call, words = BAD[name]
    with pytest.raises(Exception) as theirs:
        call(F.conv2d)
    with pytest.raises(type(theirs.value)) as ours:
        call(cd.conv2d)
    assert words.lower() in str(ours.value).lower(), str(ours.value)


def test_tensors_on_different_devices():
    with pytest.raises(RuntimeError, match="same device"):
        cd.conv2d(torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3), torch.randn(8, device="meta"))


def test_bad_activation_and_residual():
    x, w = torch.randn(1, 32, 4, 4), torch.randn(8, 32, 3, 3)
    with pytest.raises(ValueError, match="activation"):
        cd.conv2d(x, w, activation="tanh")
    with pytest.raises(RuntimeError, match="residual"):
        cd.conv2d(x, w, padding=1, residual=torch.randn(1, 8, 3, 3))
    with pytest.raises(TypeError, match="residual"):
        cd.conv2d(x, w, residual=[1.0])


# --- fallback and strict mode -------------------------------------------------------------
def test_unsupported_dtype_falls_back_with_one_warning():
    api_fallback = __import__("convdispatch.dispatcher.fallback", fromlist=["_warned"])
    api_fallback._warned.clear()
    x, w = torch.randn(1, 4, 5, 5, dtype=torch.float64), torch.randn(8, 4, 3, 3,
                                                                     dtype=torch.float64)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out1 = cd.conv2d(x, w, activation="relu")
        cd.conv2d(x, w, activation="relu")
    assert sum(issubclass(r.category, cd.FallbackWarning) for r in rec) == 1
    assert torch.allclose(out1, F.relu(F.conv2d(x, w)))


def test_strict_mode_raises_instead_of_falling_back():
    x, w = torch.randn(1, 4, 5, 5, dtype=torch.float64), torch.randn(8, 4, 3, 3,
                                                                     dtype=torch.float64)
    cd.set_strict(True)
    try:
        with pytest.raises(RuntimeError, match="strict"):
            cd.conv2d(x, w)
    finally:
        cd.set_strict(False)
    with pytest.raises(TypeError):
        cd.set_strict("yes")


def test_cpu_without_interpreter_falls_back(monkeypatch):
    monkeypatch.setattr(api, "interpreter_enabled", lambda: False)
    clear_cache()
    x, w = torch.randn(1, 32, 5, 5), torch.randn(8, 32, 3, 3)
    with pytest.warns(cd.FallbackWarning, match="TRITON_INTERPRET"):
        out = cd.conv2d(x, w, padding=1, activation="gelu")
    assert torch.allclose(out, F.gelu(F.conv2d(x, w, padding=1)), atol=1e-5)
    clear_cache()


def test_autograd_goes_through_torch_and_trains():
    x = torch.randn(2, 32, 5, 5, requires_grad=True)
    conv = cd.Conv2d(32, 8, 3, padding=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.FallbackWarning)
        y = conv(x).square().sum()
    y.backward()
    assert x.grad is not None and conv.weight.grad is not None


# --- modules ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["zeros", "reflect", "circular", "replicate"])
def test_conv2d_module_is_drop_in(mode):
    ref = torch.nn.Conv2d(32, 16, 3, padding=1, bias=True, padding_mode=mode)
    ours = cd.Conv2d(32, 16, 3, padding=1, bias=True, padding_mode=mode)
    ours.load_state_dict(ref.state_dict())
    assert list(ours.state_dict()) == list(ref.state_dict())
    x = torch.randn(2, 32, 6, 6)
    with torch.no_grad():
        assert rel_err(ours(x), ref(x).double()) < TOL32


def test_conv3d_module_is_drop_in():
    ref = torch.nn.Conv3d(16, 8, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), groups=2)
    ours = cd.Conv3d(16, 8, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), groups=2)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(1, 16, 2, 6, 6)
    with torch.no_grad():
        assert rel_err(ours(x), ref(x).double()) < TOL32


# --- explain, forcing, cache --------------------------------------------------------------
def test_explain_tensor_and_bare_geometry():
    x, w = torch.randn(2, 32, 6, 6), torch.randn(16, 32, 3, 3)
    e = cd.explain(x, w, padding=1)
    assert e.candidate == e.ranked[0][0] and e.reason and e.chooser in ("rule", "model")
    assert e.candidate.id in str(e)
    geom = ConvGeometry(n=32, c=64, k=64, h=56, w=56, r=3, s=3, pad=(0, 1, 1))
    e2 = cd.explain(geom, gpu="h100")
    assert e2.device.key == "h100" and len(e2.ranked) > 3
    assert all(c.family in {f.name for f in registry.families()} for c, _ in e2.ranked)
    with pytest.raises(ValueError, match="unknown GPU"):
        cd.explain(geom, gpu="tpu-v9")
    with pytest.raises(TypeError):
        cd.explain("not a tensor")
    e3 = cd.explain(torch.randn(1, 4, 5, 5, dtype=torch.float64),
                    torch.randn(2, 4, 3, 3, dtype=torch.float64))
    assert e3.fallback and "dtype" in e3.fallback


def test_force_runs_the_named_candidate(monkeypatch):
    x, w = torch.randn(1, 64, 6, 6), torch.randn(32, 64, 3, 3) / 10
    geom = cd.explain(x, w, padding=1).geometry
    from convdispatch.kernels.device import INTERPRETER

    cand = [c for c in registry.candidates(geom, INTERPRETER) if c.family == "splitk"][0]
    ran = []
    fam = registry.family("splitk")
    orig = fam.launch
    monkeypatch.setattr(fam, "launch", lambda call, cfg: (ran.append(cfg), orig(call, cfg)))
    with cd.force(cand.id):
        out = cd.conv2d(x, w, padding=1)
    assert ran == [cand.config]
    assert rel_err(out, _ref(2, x, w, padding=1)) < TOL32
    with pytest.raises(ValueError, match="cannot run"):
        with cd.force("stem:" + str(registry.family("stem").configs[0])):
            cd.conv2d(x, w, padding=1)
    with pytest.raises(ValueError, match="unknown kernel family"):
        with cd.force("warp_drive:BLOCK_M=64"):
            pass


def test_decision_cache_and_replay_plan():
    clear_cache()
    x, w = torch.randn(1, 32, 6, 6), torch.randn(16, 32, 3, 3)
    cd.conv2d(x, w, padding=1)
    misses = CACHE.misses
    x2 = torch.randn(1, 32, 6, 6)
    out = cd.conv2d(x2, w, padding=1)  # replayed plan with new tensors
    assert CACHE.misses == misses and len(api.PLANS) == 1
    assert rel_err(out, _ref(2, x2, w, padding=1)) < TOL32
    cd.conv2d(x2.to(memory_format=torch.channels_last), w, padding=1)
    assert len(api.PLANS) == 2, "another layout is another signature"


def test_threads_share_one_decision_and_get_right_results():
    clear_cache()
    x = [torch.randn(1, 32, 5, 5) for _ in range(6)]
    w = torch.randn(16, 32, 3, 3)
    outs: dict[int, torch.Tensor] = {}
    errors = []

    def work(i):
        try:
            outs[i] = cd.conv2d(x[i], w, padding=1)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert CACHE.misses == 1
    for i in range(6):
        assert rel_err(outs[i], _ref(2, x[i], w, padding=1)) < TOL32


def test_choice_is_the_same_in_another_process():
    code = (
        "import convdispatch as cd\n"
        "from convdispatch.data.problems import load_set\n"
        "for p in load_set('resnet50')[:12] + load_set('mobilenet_v2')[:6]:\n"
        "    print(cd.explain(p.geom, gpu='h100').candidate.id)\n"
    )
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert runs[0] == runs[1] and runs[0].count("\n") == 18


def test_geometry_no_family_supports_falls_back():
    # Depthwise 3D with 7x7x7 taps: too many taps to unroll, too few channels for a GEMM.
    x, w = torch.randn(1, 2, 7, 7, 7), torch.randn(2, 1, 7, 7, 7)
    with pytest.warns(cd.FallbackWarning, match="no kernel family"):
        out = cd.conv3d(x, w, groups=2)
    assert torch.allclose(out, F.conv3d(x, w, groups=2), atol=1e-5)


def test_threads_load_the_shipped_model_once(monkeypatch):
    """Many threads asking for an H100 decision at once load the model a single time
    and all get the model's (same) choice."""
    from convdispatch.dispatcher import selection
    from convdispatch.dispatcher.model_chooser import ModelChooser

    loads = []
    real_load = ModelChooser.load.__func__

    def counting_load(cls, path, direction=None):
        loads.append(path)
        return real_load(cls, path, direction)

    monkeypatch.setattr(ModelChooser, "load", classmethod(counting_load))
    selection.reset()
    geom = ConvGeometry(n=8, c=64, k=64, h=28, w=28, r=3, s=3, pad=(0, 1, 1))
    results, errors = [], []

    def work():
        try:
            results.append(cd.explain(geom, gpu="h100"))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    selection.reset()
    assert not errors and len(loads) == 1
    assert {(r.chooser, str(r.candidate)) for r in results} == {
        (results[0].chooser, str(results[0].candidate))}
    assert results[0].chooser == "model"


def test_rule_order_is_built_from_sweeps_and_names_real_configs(tmp_path):
    """The shipped config order holds only configs of the registry's spaces, and
    build_order ranks a family's configs by their efficiency inside the family."""
    from convdispatch.dispatcher import rule_order
    from convdispatch.heuristics.synthetic import synthetic_sweep
    from convdispatch.kernels.base import Config

    shipped = rule_order.config_order()
    assert shipped, "dispatcher/rule_order.json is missing"
    for fam, cfgs in shipped.items():
        space = {str(c) for c in registry.family(fam).configs}
        assert set(cfgs) <= space, f"{fam}: configs outside its space"
    csv = tmp_path / "s.csv"
    df = synthetic_sweep(n_problems=14, seed=3, fail_rate=0.0)
    df.to_csv(csv, index=False)
    order = rule_order.build_order([str(csv)])["families"]
    ok = df[df["family"] == "implicit_gemm"].copy()
    ok["eff"] = ok.groupby("problem_id")["latency_us"].transform("min") / ok["latency_us"]
    geo = ok.groupby("config")["eff"].apply(lambda s: float(s.prod() ** (1 / len(s))))
    assert order["implicit_gemm"][0] == geo.idxmax()
    Config.parse(order["implicit_gemm"][0])


def test_rule_order_update_replaces_only_the_named_families():
    from convdispatch.dispatcher import rule_order

    current = {"source": ["a.csv"], "min_share": 0.3,
               "families": {"stem": ["s1", "s2"], "depthwise": ["d1"]}}
    new = {"source": ["b.csv"], "min_share": 0.3,
           "families": {"stem": ["s9"], "depthwise": ["d9"], "depthwise_rows": ["r1"]}}
    out = rule_order.update_order(current, new, ["depthwise_rows", "depthwise"])
    assert out["families"] == {"depthwise": ["d9"], "depthwise_rows": ["r1"],
                               "stem": ["s1", "s2"]}
    assert out["source"] == ["a.csv"]
    assert out["rebuilt"] == {"depthwise_rows": ["b.csv"], "depthwise": ["b.csv"]}
    assert current["families"]["depthwise"] == ["d1"]  # not modified in place
    with pytest.raises(ValueError, match="'grouped_gemm'"):
        rule_order.update_order(current, new, ["grouped_gemm"])


def test_rule_chooser_takes_the_first_listed_config_of_its_family(monkeypatch):
    from convdispatch.dispatcher import rule_order
    from convdispatch.dispatcher.choosers import RuleChooser
    from convdispatch.kernels.device import lookup

    h100 = lookup("h100")
    geom = ConvGeometry(n=8, c=64, k=64, h=28, w=28, r=3, s=3, pad=(0, 1, 1),
                        layout="contiguous")  # implicit_gemm first (no TMA boxes)
    cands = [c for c in registry.candidates(geom, h100) if c.family == "implicit_gemm"]
    want = cands[len(cands) // 2]
    monkeypatch.setattr(rule_order, "config_order",
                        lambda: {"implicit_gemm": {str(want.config): 0}})
    dec = RuleChooser().choose(geom, cands, h100)
    assert dec.candidate == want and "measured order" in dec.reason
    monkeypatch.setattr(rule_order, "config_order", lambda: {})
    assert "estimated waves" in RuleChooser().choose(geom, cands, h100).reason


@pytest.mark.parametrize("n,c,g,wide", [
    (32, 256, 32, True),  # ResNeXt-50 layer2.0: 8 channels a group, 3136 tiles
    (1, 256, 32, False),  # batch 1: 98 tiles, under two waves of 132 SMs
    (32, 104, 13, False),  # 13 groups of 8: a 4-group tile leaves a group idle
    (32, 1024, 32, True),  # 32 channels a group: one group a tile
    (32, 2048, 32, False),  # 64 channels a group: no whole group in 32 columns
])
def test_rule_takes_the_wide_packed_tile_where_it_fills_the_gpu(n, c, g, wide):
    from convdispatch.dispatcher.choosers import WIDE_PACKED, RuleChooser, wide_packed_pays
    from convdispatch.kernels.device import lookup

    h100 = lookup("h100")
    geom = ConvGeometry(n=n, c=c, k=c, g=g, h=56, w=56, r=3, s=3, stride=(1, 2, 2),
                        pad=(0, 1, 1), dtype="float16")
    assert wide_packed_pays(geom, h100) == wide
    cands = [x for x in registry.candidates(geom, h100) if x.family == "grouped_packed"]
    if not cands:
        return
    dec = RuleChooser().choose(geom, cands, h100)
    assert (dec.candidate.config == WIDE_PACKED) == wide, dec.candidate
    assert ("32-channel tile" in dec.reason) == wide
    assert not dec.candidate.config.get("L1_TAPS")


@pytest.mark.parametrize("kw,device,tma", [
    (dict(c=256, k=64), "h100", True),  # ResNet-50 layer1.1.conv1
    (dict(c=32, k=16), "h100", False),  # MobileNetV2 features.1: the K box half empty
    (dict(c=256, k=512, stride=(1, 2, 2)), "h100", False),  # strided rows: no dense matrix
    (dict(c=256, k=64, layout="contiguous"), "h100", False),
    (dict(c=256, k=64), "a100", False),  # no TMA before compute capability 9.0
])
def test_rule_sends_wide_stride1_1x1s_to_pointwise_tma(kw, device, tma):
    from convdispatch.dispatcher.choosers import RuleChooser, tma_pays
    from convdispatch.kernels.device import lookup

    spec = lookup(device)
    geom = ConvGeometry(n=32, h=56, w=56, r=1, s=1, dtype="float16", **kw)
    assert tma_pays(geom, spec) == tma
    dec = RuleChooser().choose(geom, registry.candidates(geom, spec), spec)
    assert (dec.candidate.family == "pointwise_tma") == tma, dec.candidate
    assert ("TMA tiles" in dec.reason) == tma
