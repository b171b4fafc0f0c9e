"""Hostile input at every public entry point: torch's exception type, or torch's result.

Each property draws odd arguments, runs torch and convdispatch on the same
call and asserts the same outcome: the same exception type where torch
rejects the call, the same values (within the dtype's tolerance; NaN/Inf at
the same places) where it accepts it. Shapes are tiny: everything runs on
Triton's CPU interpreter.
"""

from __future__ import annotations

import warnings

import convdispatch as cd
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from convdispatch.dispatcher import registry
from convdispatch.kernels.device import INTERPRETER
from convdispatch.kernels.geometry import ConvGeometry
from helpers import TOL, rel_err
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from torch import nn

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TORCH_FN = {2: F.conv2d, 3: F.conv3d}
OUR_FN = {2: cd.conv2d, 3: cd.conv3d}
ACTS = {None: lambda y: y, "relu": F.relu, "relu6": F.relu6, "gelu": F.gelu, "silu": F.silu}


@pytest.fixture(autouse=True)
def _quiet_fallbacks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.FallbackWarning)
        yield


def outcome(fn):
    """The call's result, or the exception it raised."""
    try:
        return fn()
    except Exception as e:  # the exception is the result under test
        return e


def tol_of(dtype: torch.dtype) -> float:
    return TOL.get(str(dtype).removeprefix("torch."), 0.0)


def same_kind(a: Exception, b: Exception) -> bool:
    """Same type, or one a subclass of the other (torch's NotImplementedError is a
    RuntimeError: code catching the one catches both)."""
    return isinstance(a, type(b)) or isinstance(b, type(a))


def assert_like_torch(theirs, ours, reference=None) -> None:
    """Same exception type as torch, or a result equal to torch's (float64 ``reference``)."""
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception) and same_kind(ours, theirs), (
            f"torch raised {theirs!r}, convdispatch gave {ours!r}")
        return
    assert not isinstance(ours, Exception), f"torch accepted the call, convdispatch raised {ours!r}"
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert ours.device == theirs.device
    if ours.is_floating_point() and ours.dtype in (torch.float16, torch.bfloat16, torch.float32):
        ref = theirs.double() if reference is None else reference
        assert rel_err(ours, ref) < tol_of(ours.dtype)
    else:
        assert torch.equal(ours, theirs)


# --- stride / padding / dilation / groups ---------------------------------------------------
SCALARS = st.one_of(
    st.integers(-2, 3),
    st.sampled_from([2**31, 2**40, None, True, False, 1.0, 2.5, float("nan"), "", "same",
                     "valid", "SAME", "full", "1", 1j, object()]),
)
SEQUENCES = st.lists(st.integers(-2, 3), max_size=4).flatmap(
    lambda v: st.sampled_from([tuple(v), list(v), torch.Size([abs(i) for i in v])]))
HYPER = st.one_of(SCALARS, SEQUENCES)
GROUPS = st.sampled_from([1, 1, 1, 2, 4, 0, -1, 1.0, None, True, "1"])


@FAST
@given(dims=st.sampled_from([2, 3]), name=st.sampled_from(["stride", "padding", "dilation"]),
       value=HYPER, groups=GROUPS)
def test_one_bad_hyperparameter_like_torch(dims, name, value, groups):
    """One odd argument at a time: the same exception type as torch, or torch's values."""
    x = torch.randn(1, 4, *(4,) * dims)
    w = torch.randn(4, 4, *(2,) * dims) / 4
    kw = {name: value, "groups": groups} if groups != 1 else {name: value}
    assume(not too_big_to_interpret(TORCH_FN[dims], x, w, kw))
    theirs = outcome(lambda: TORCH_FN[dims](x, w, **kw))
    ours = outcome(lambda: OUR_FN[dims](x, w, **kw))
    event(f"torch: {type(theirs).__name__}")
    assert_like_torch(theirs, ours)


@FAST
@given(dims=st.sampled_from([2, 3]), stride=HYPER, padding=HYPER, dilation=HYPER, groups=GROUPS)
def test_bad_hyperparameters_rejected_iff_torch_rejects(dims, stride, padding, dilation, groups):
    """Several odd arguments: which one is reported first may differ, rejection may not."""
    x = torch.randn(1, 4, *(4,) * dims)
    w = torch.randn(4, 4, *(2,) * dims) / 4
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    assume(not too_big_to_interpret(TORCH_FN[dims], x, w, kw))
    theirs = outcome(lambda: TORCH_FN[dims](x, w, **kw))
    ours = outcome(lambda: OUR_FN[dims](x, w, **kw))
    event(f"torch: {type(theirs).__name__}")
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"torch raised {theirs!r}, convdispatch did not"
    else:
        # With values past 2**31 torch's CPU path can overflow and return a shape its own
        # formula does not give (padding = dilation = 2**31 gave 0x0 instead of 1x1;
        # padding 2**31 with dilation 2 gave 2x2 where the formula gives 2**32 + 2, which
        # convdispatch refuses to allocate): no reference then.
        assume(torch_sized(theirs, x, w, kw))
        assert_like_torch(theirs, ours)


def too_big_to_interpret(fn, x: torch.Tensor, w: torch.Tensor, kw: dict) -> bool:
    """Whether torch accepts the call (on the meta device: shapes only) with an output of
    more than 2**16 elements. Stride 2**31 with padding 2**40 gives 1025 x 1025 (x 1025 in
    3D) positions: minutes under the interpreter, and in 3D torch's own outcome depends on
    whether the machine has the 17 GB it allocates."""
    try:
        out = fn(x.to("meta"), w.to("meta"), **kw)
    except Exception:  # noqa: BLE001 - rejected: the test compares the rejections
        return False
    return out.numel() > 1 << 16


def torch_sized(out: torch.Tensor, x: torch.Tensor, w: torch.Tensor, kw: dict) -> bool:
    """Whether torch's output has the spatial size of its documented formula."""
    dims = x.dim() - 2

    def per_dim(v):
        return list(v) if isinstance(v, (list, tuple)) else [v] * dims

    try:
        st_, pd_, dl_ = (per_dim(kw[k]) for k in ("stride", "padding", "dilation"))
        want = [(i + 2 * p - d * (k - 1) - 1) // s + 1 for i, k, s, p, d in
                zip(x.shape[2:], w.shape[2:], st_, pd_, dl_)]
    except (TypeError, ValueError):
        return True  # a form (a string padding, a float) the formula does not cover
    return list(out.shape[2:]) == want


# Argument forms where a hand-written check once differed from torch's.
ARGS_GAPS = {
    "numpy int stride": dict(stride=np.int64(2)),
    "numpy int in a tuple": dict(padding=(np.int64(1), 0)),
    "0-d tensor padding": dict(padding=torch.tensor(1)),
    "numpy int groups": dict(groups=np.int64(1)),
    "float in a tuple": dict(stride=(1.0, 1)),
    "None in a list": dict(dilation=[None, 1]),
    "bool in a list": dict(padding=[True, 1]),
    "nested list": dict(stride=[[1], [1]]),
    "int64 overflow": dict(stride=2**63),
    # torch checks every argument's type before any value: TypeError wins.
    "value error before a later type error": dict(stride=0, padding=None),
    # ConvGeometry's ValueError leaks out where torch raises RuntimeError.
    "zero-size kernel": dict(weight=torch.randn(4, 4, 0, 3)),
}


@pytest.mark.parametrize("name", sorted(ARGS_GAPS))
def test_known_argument_check_gaps(name):
    kw = dict(ARGS_GAPS[name])
    x, w = torch.randn(1, 4, 5, 5), kw.pop("weight", torch.randn(4, 4, 3, 3))
    theirs = outcome(lambda: F.conv2d(x, w, **kw))
    ours = outcome(lambda: cd.conv2d(x, w, **kw))
    assert_like_torch(theirs, ours)


def test_replayed_calls_check_argument_types_too():
    """A recorded plan must not accept what the checked path rejects (True == 1.0 == 1)."""
    x, w = torch.randn(1, 4, 5, 5), torch.randn(4, 4, 3, 3)
    cd.conv2d(x, w, None, 1, (1, 1), 1, 1)
    for kw, exc in [(dict(stride=True), TypeError), (dict(stride=1.0), TypeError),
                    (dict(groups=True), TypeError), (dict(dilation=1.0), TypeError)]:
        args = dict(stride=1, padding=(1, 1), dilation=1, groups=1) | kw
        with pytest.raises(exc):
            F.conv2d(x, w, **args)
        with pytest.raises(exc):
            cd.conv2d(x, w, **args)


# --- ranks, dtypes, devices --------------------------------------------------------------
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64,
          torch.int32, torch.uint8, torch.bool, torch.complex64]


def _cast(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    if dtype == torch.bool:
        return t > 0
    if not (dtype.is_floating_point or dtype.is_complex):
        return (t * 3).round().abs().to(dtype)
    return t.to(dtype)


@settings(FAST, max_examples=60)
@given(dims=st.sampled_from([2, 3]), x_off=st.sampled_from([0, 0, 0, 0, -1, 1, -2, -5]),
       w_off=st.sampled_from([0, 0, 0, 0, -1, 1, -4]), dtype=st.sampled_from(DTYPES),
       w_dtype=st.sampled_from([None] * 6 + DTYPES), channels=st.sampled_from([2, 2, 2, 0, 3]),
       with_bias=st.booleans())
def test_ranks_and_dtypes_like_torch(dims, x_off, w_off, dtype, w_dtype, channels, with_bias):
    """Ranks around the right one, every dtype family, mismatched dtypes."""
    gen = torch.Generator().manual_seed(x_off * 7 + w_off)
    x_shape = ([2, channels] + [4] * 4)[:max(dims + 2 + x_off, 0)]
    w_shape = ([3, 2] + [2] * 4)[:max(dims + 2 + w_off, 0)]
    x = _cast(torch.randn(x_shape, generator=gen), dtype)
    w = _cast(torch.randn(w_shape, generator=gen) / 2, w_dtype or dtype)
    b = _cast(torch.randn(3, generator=gen), dtype) if with_bias else None
    theirs = outcome(lambda: TORCH_FN[dims](x, w, b))
    ours = outcome(lambda: OUR_FN[dims](x, w, b))
    event(f"torch: {type(theirs).__name__}")
    reference = None
    if not isinstance(theirs, Exception) and dtype.is_floating_point:
        reference = TORCH_FN[dims](x.double(), w.double(), None if b is None else b.double())
    assert_like_torch(theirs, ours, reference)


def test_mixed_meta_and_cpu_is_a_clear_error():
    """torch lets one meta operand make the call a shape computation; convdispatch refuses."""
    x, w = torch.randn(1, 4, 5, 5), torch.randn(4, 4, 3, 3)
    for args in ((x, w.to("meta")), (x.to("meta"), w), (x, w, torch.randn(4, device="meta"))):
        with pytest.raises(RuntimeError, match="same device"):
            cd.conv2d(*args)


# --- strided, expanded and overlapping views --------------------------------------------------
def _view(kind: str, shape: list[int], gen) -> torch.Tensor:
    """A tensor of ``shape`` laid out as ``kind`` (values drawn from ``gen``)."""
    if kind == "contiguous":
        return torch.randn(shape, generator=gen)
    if kind == "channels_last":
        fmt = torch.channels_last if len(shape) == 4 else torch.channels_last_3d
        return torch.randn(shape, generator=gen).to(memory_format=fmt)
    if kind == "expand_batch":
        return torch.randn([1, *shape[1:]], generator=gen).expand(shape)
    if kind == "expand_channel":
        return torch.randn([shape[0], 1, *shape[2:]], generator=gen).expand(shape)
    if kind == "transposed":  # last two dims swapped in memory
        base = torch.randn([*shape[:-2], shape[-1], shape[-2]], generator=gen)
        return base.transpose(-1, -2)
    if kind == "sliced":  # every other element in every dim
        return torch.randn([2 * s for s in shape], generator=gen)[(slice(None, None, 2),) *
                                                                 len(shape)]
    if kind == "overlapping":  # channels share memory with neighbours (stride 1 along C)
        strides = [1] * len(shape)
        strides[-1] = 1
        for i in range(len(shape) - 2, -1, -1):
            strides[i] = strides[i + 1] * shape[i + 1]
        strides[1] = 1
        span = sum((s - 1) * sd for s, sd in zip(shape, strides)) + 1
        return torch.randn(span, generator=gen).as_strided(shape, strides)
    raise AssertionError(kind)


VIEWS = ["contiguous", "channels_last", "expand_batch", "expand_channel", "transposed",
         "sliced", "overlapping"]


@FEW
@given(dims=st.sampled_from([2, 2, 3]), n=st.integers(1, 2), c=st.sampled_from([2, 4, 8]),
       k=st.sampled_from([2, 4, 8]), r=st.sampled_from([1, 3]), stride=st.integers(1, 2),
       depthwise=st.booleans(), x_kind=st.sampled_from(VIEWS), w_kind=st.sampled_from(VIEWS),
       b_kind=st.sampled_from(["none", "contiguous", "strided", "expanded"]),
       r_kind=st.sampled_from(["none"] + VIEWS), activation=st.sampled_from(list(ACTS)))
def test_views_match_torch(dims, n, c, k, r, stride, depthwise, x_kind, w_kind, b_kind, r_kind,
                           activation):
    """Any readable layout of any operand gives torch's values (output is always fresh)."""
    gen = torch.Generator().manual_seed(n + c + k)
    groups, k = (c, c) if depthwise else (1, k)
    spatial = [3] + [5] * (dims - 1)
    x = _view(x_kind, [n, c, *spatial], gen)
    w = _view(w_kind, [k, c // groups, *[r] * dims], gen) / 4
    bias = {"none": None, "contiguous": torch.randn(k, generator=gen),
            "strided": torch.randn(2 * k, generator=gen)[::2],
            "expanded": torch.randn(1, generator=gen).expand(k)}[b_kind]
    pad = r // 2
    out_sp = [(s + 2 * pad - r) // stride + 1 for s in spatial]
    res = None if r_kind == "none" else _view(r_kind, [n, k, *out_sp], gen)
    for attempt in range(2):  # the second call replays the recorded plan
        ours = OUR_FN[dims](x, w, bias, stride, pad, 1, groups, activation=activation,
                            residual=res)
        ref = TORCH_FN[dims](x.double(), w.double(), None if bias is None else bias.double(),
                             stride, pad, 1, groups)
        ref = ACTS[activation](ref if res is None else ref + res.double())
        assert rel_err(ours, ref) < TOL["float32"], (attempt, x.stride(), w.stride())


# --- NaN and Inf -------------------------------------------------------------------------------
@FAST
@given(dtype=st.sampled_from([torch.float32, torch.float16]),
       target=st.sampled_from(["x", "w", "bias", "residual"]),
       value=st.sampled_from([float("nan"), float("inf"), float("-inf")]),
       spots=st.lists(st.integers(0, 10**6), min_size=1, max_size=3),
       padding=st.integers(0, 1), activation=st.sampled_from(list(ACTS)),
       depthwise=st.booleans())
def test_nan_and_inf_propagate_like_torch(dtype, target, value, spots, padding, activation,
                                          depthwise):
    """NaN/Inf land where torch's float64 result has them; finite values stay finite and equal."""
    gen = torch.Generator().manual_seed(len(spots))
    c, groups = (8, 8) if depthwise else (8, 1)
    x = torch.randn(2, c, 5, 5, generator=gen).to(memory_format=torch.channels_last)
    w = torch.randn(8, c // groups, 3, 3, generator=gen) / 3
    bias = torch.randn(8, generator=gen)
    res = torch.randn(2, 8, 3 + 2 * padding, 3 + 2 * padding, generator=gen)
    tensors = {"x": x, "w": w, "bias": bias, "residual": res}
    flat = tensors[target].view(-1) if target != "x" else x.permute(0, 2, 3, 1).reshape(-1)
    for s in spots:
        flat[s % flat.numel()] = value
    if target == "x":
        x = flat.view(2, 5, 5, c).permute(0, 3, 1, 2)
    x, w, bias, res = (t.to(dtype) for t in (x, w, bias, res))
    ours = cd.conv2d(x, w, bias, 1, padding, 1, groups, activation=activation, residual=res)
    ref = ACTS[activation](F.conv2d(x.double(), w.double(), bias.double(), 1, padding, 1,
                                    groups) + res.double())
    for mask in (torch.isnan, torch.isposinf, torch.isneginf):
        assert torch.equal(mask(ours), mask(ref)), mask.__name__
    finite = torch.isfinite(ref)
    assert finite.any() and rel_err(ours[finite], ref[finite]) < tol_of(dtype)


# --- huge shapes: meta tensors and 64-bit offsets ------------------------------------------------
@pytest.mark.parametrize("dims", [2, 3])
def test_meta_tensors_of_huge_shapes_give_torch_shapes(dims):
    """No data, no kernel: torch computes the shape; no warning, even in strict mode."""
    spatial = [4096, 4096] if dims == 2 else [64, 512, 512]
    x = torch.empty(64, 256, *spatial, device="meta", dtype=torch.float16)  # 2**38 elements
    w = torch.empty(512, 256, *[3] * dims, device="meta", dtype=torch.float16)
    ref = TORCH_FN[dims](x, w, None, 2, 1)
    res = torch.empty(ref.shape, device="meta", dtype=torch.float16)
    cd.set_strict(True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = OUR_FN[dims](x, w, None, 2, 1, activation="relu", residual=res)
    finally:
        cd.set_strict(False)
    assert out.device.type == "meta" and out.shape == ref.shape and out.dtype == ref.dtype
    assert "meta" in cd.explain(x, w, None, 2, 1).fallback
    op = torch.ops.convdispatch.conv(x, w, None, [2], [1], [1], 1, "relu", res, "", dims)
    assert op.shape == ref.shape and op.device.type == "meta"


def test_module_on_meta_device():
    m = cd.Conv2d(16, 32, 3, padding=1, padding_mode="reflect").to("meta")
    x = torch.empty(8, 16, 1024, 1024, device="meta")
    assert m(x).shape == nn.Conv2d(16, 32, 3, padding=1).to("meta")(x).shape


_BIG = 2**31 + 7  # a batch stride past int32 element offsets


@pytest.fixture(scope="module")
def big_storage():
    """4 GiB of float16 that is never touched except where views put data."""
    try:
        return torch.empty(_BIG + 4096, dtype=torch.float16)
    except (RuntimeError, MemoryError) as e:  # pragma: no cover - depends on the host
        pytest.skip(f"cannot reserve 4 GiB of address space: {e}")


def _far_apart(store, shape, offset, gen):
    """A (2, ...) view whose second sample lies more than 2**31 elements after the first."""
    inner = [int(np.prod(shape[i + 1:])) for i in range(1, len(shape))]
    t = store.as_strided(shape, [_BIG, *inner], offset)
    t.copy_(torch.randn(shape, generator=gen).half())
    return t


GEOMS_64 = {
    "dense 1x1": dict(c=16, k=16, r=1, pad=0, g=1),
    "dense 3x3": dict(c=16, k=32, r=3, pad=1, g=1),
    "stem 3ch": dict(c=3, k=16, r=3, pad=1, g=1),
    "grouped": dict(c=16, k=16, r=3, pad=1, g=4),
    "depthwise": dict(c=16, k=16, r=3, pad=1, g=16),
}


@pytest.mark.parametrize("name", sorted(GEOMS_64))
def test_int64_offsets_in_every_family(name, big_storage):
    """Operands whose element offsets exceed int32: every family that can run them is right."""
    p = GEOMS_64[name]
    gen = torch.Generator().manual_seed(0)
    x = _far_apart(big_storage, [2, p["c"], 4, 4], 0, gen)
    res = _far_apart(big_storage, [2, p["k"], 4, 4], 1024, gen)
    w = (torch.randn(p["k"], p["c"] // p["g"], p["r"], p["r"], generator=gen) / 4).half()
    kw = dict(padding=p["pad"], groups=p["g"])
    geom = cd.explain(x, w, **kw).geometry
    ref = F.relu(F.conv2d(x.double(), w.double(), **kw) + res.double())
    fams = {}
    for cand in registry.candidates(geom, INTERPRETER):
        fams.setdefault(cand.family, cand)
    assert fams, "some family runs this geometry"
    for fam, cand in fams.items():
        with cd.force(cand):
            out = cd.conv2d(x, w, activation="relu", residual=res, **kw)
        assert rel_err(out, ref) < TOL["float16"], fam


def test_huge_geometry_can_be_explained():
    geom = ConvGeometry(n=4096, c=512, k=512, h=224, w=224, r=3, s=3, pad=(0, 1, 1))
    assert geom.n * geom.c * geom.h * geom.w > 2**36
    e = cd.explain(geom, gpu="h100")
    assert e.candidate is not None and e.ranked


# --- residual and activation ----------------------------------------------------------------
RESIDUALS = {
    "broadcastable shape": (lambda: torch.randn(1, 4, 1, 1), RuntimeError),
    "wrong rank": (lambda: torch.randn(4, 5, 5), RuntimeError),
    "one too small": (lambda: torch.randn(2, 4, 5, 4), RuntimeError),
    "float64 with float32": (lambda: torch.randn(2, 4, 5, 5, dtype=torch.float64),
                             RuntimeError),
    "meta device": (lambda: torch.randn(2, 4, 5, 5, device="meta"), RuntimeError),
    "a list": (lambda: [[0.0]], TypeError),
    "a number": (lambda: 1.0, TypeError),
}


@pytest.mark.parametrize("name", sorted(RESIDUALS))
def test_bad_residual_is_a_clear_error(name):
    make, exc = RESIDUALS[name]
    with pytest.raises(exc, match="residual|same device"):
        cd.conv2d(torch.randn(2, 4, 5, 5), torch.randn(4, 4, 3, 3), padding=1, residual=make())


def test_residual_may_alias_the_input():
    x = torch.randn(2, 4, 5, 5)
    w = torch.randn(4, 4, 3, 3) / 4
    out = cd.conv2d(x, w, padding=1, activation="relu", residual=x)
    assert rel_err(out, F.relu(F.conv2d(x.double(), w.double(), padding=1) + x.double())) < 2e-3


@FAST
@given(st.one_of(st.text(max_size=6), st.sampled_from(
    ["RELU", "Relu", " relu", "relu ", "tanh", "", "None", 0, 1, 1.5, True, [], ("relu",),
     b"relu", F.relu, nn.ReLU()])))
def test_unknown_activation_is_a_value_error(activation):
    x, w = torch.randn(1, 4, 3, 3), torch.randn(2, 4, 1, 1)
    valid = isinstance(activation, str) and activation in ("none", "relu", "relu6", "gelu", "silu")
    if valid:
        assert cd.conv2d(x, w, activation=activation).shape == (1, 2, 3, 3)
    else:
        with pytest.raises(ValueError, match="activation"):
            cd.conv2d(x, w, activation=activation)


# --- modules ------------------------------------------------------------------------------------
@FEW
@given(cin=st.sampled_from([0, 1, 4, 6, -1, 2.0]), cout=st.sampled_from([0, 4, 3, -2]),
       ks=st.sampled_from([1, 3, (1, 3), (3, 3, 3), -1, 1.5]),
       stride=st.sampled_from([1, 2, 0, (1, 2), -1]),
       padding=st.sampled_from([0, 1, "same", "valid", "full", -1, (1, 0)]),
       groups=st.sampled_from([1, 2, 0, 3]),
       mode=st.sampled_from(["zeros", "reflect", "circular", "replicate", "mirror"]))
def test_module_construction_and_forward_like_torch(cin, cout, ks, stride, padding, groups, mode):
    kw = dict(stride=stride, padding=padding, groups=groups, padding_mode=mode)
    torch.manual_seed(0)
    theirs_m = outcome(lambda: nn.Conv2d(cin, cout, ks, **kw))
    torch.manual_seed(0)
    ours_m = outcome(lambda: cd.Conv2d(cin, cout, ks, **kw))
    if isinstance(theirs_m, Exception):
        assert type(ours_m) is type(theirs_m), (theirs_m, ours_m)
        return
    event("constructed")
    assert list(ours_m.state_dict()) == list(theirs_m.state_dict())
    x = torch.randn(1, cin, 5, 5)
    with torch.no_grad():
        assert_like_torch(outcome(lambda: theirs_m(x)), outcome(lambda: ours_m(x)))


MODULE_MISUSE = {
    "5D input": lambda m: m(torch.randn(1, 4, 2, 6, 6)),
    "wrong channels": lambda m: m(torch.randn(1, 3, 6, 6)),
    "float64 input to float32 weights": lambda m: m(torch.randn(1, 4, 6, 6).double()),
    "half module, float input": lambda m: m.half()(torch.randn(1, 4, 6, 6)),
    "extra keyword": lambda m: m(torch.randn(1, 4, 6, 6), activation="relu"),
    "no input": lambda m: m(),
    "list input": lambda m: m([[1.0]]),
    "state_dict of the wrong shape": lambda m: m.load_state_dict(
        {"weight": torch.randn(8, 4, 1, 1), "bias": torch.randn(8)}),
    "weight swapped for a wrong-shaped tensor": lambda m: (
        setattr(m, "weight", nn.Parameter(torch.randn(8, 5, 3, 3))), m(torch.randn(1, 4, 6, 6))),
    "input smaller than the kernel": lambda m: m(torch.randn(1, 4, 1, 1)),
}


@pytest.mark.parametrize("name", sorted(MODULE_MISUSE))
def test_module_misuse_raises_like_torch(name):
    torch.manual_seed(0)
    theirs = outcome(lambda: MODULE_MISUSE[name](nn.Conv2d(4, 8, 3)))
    torch.manual_seed(0)
    ours = outcome(lambda: MODULE_MISUSE[name](cd.Conv2d(4, 8, 3)))
    assert isinstance(theirs, Exception) and isinstance(ours, Exception), (theirs, ours)
    assert same_kind(ours, theirs), (theirs, ours)


# --- explain, force, settings, the operator ----------------------------------------------------
_X, _W = torch.randn(1, 4, 5, 5), torch.randn(4, 4, 3, 3)
ENTRY_MISUSE = {
    "explain(chooser='best')": (lambda: cd.explain(_X, _W, chooser="best"), ValueError),
    "explain(gpu=3)": (lambda: cd.explain(_X, _W, gpu=3), TypeError),
    "explain(gpu='tpu-v9')": (lambda: cd.explain(_X, _W, gpu="tpu-v9"), ValueError),
    "explain(list)": (lambda: cd.explain([1, 2]), TypeError),
    "explain(x) without weight": (lambda: cd.explain(_X), TypeError),
    "explain(x, 3D weight)": (lambda: cd.explain(_X, torch.randn(4, 4, 3)), RuntimeError),
    "explain(stride=0)": (lambda: cd.explain(_X, _W, stride=0), RuntimeError),
    "explain(padding='full')": (lambda: cd.explain(_X, _W, padding="full"), RuntimeError),
    "explain(channel mismatch)": (lambda: cd.explain(_X, torch.randn(4, 3, 3, 3)),
                                  RuntimeError),
    "explain(activation=...)": (lambda: cd.explain(_X, _W, activation="relu"), TypeError),
    "ConvGeometry(n=-1)": (lambda: ConvGeometry(n=-1, c=4, k=4, h=5, w=5, r=3, s=3),
                           ValueError),
    "ConvGeometry(c=1.5)": (lambda: ConvGeometry(n=1, c=1.5, k=4, h=5, w=5, r=3, s=3),
                            TypeError),
    "ConvGeometry(g not dividing)": (
        lambda: ConvGeometry(n=1, c=4, k=6, h=5, w=5, r=3, s=3, g=4), ValueError),
    "ConvGeometry(dtype='int8')": (
        lambda: ConvGeometry(n=1, c=4, k=4, h=5, w=5, r=3, s=3, dtype="int8"), ValueError),
    "force(123)": (lambda: cd.force(123).__enter__(), TypeError),
    "force('warp_drive:X=1')": (lambda: cd.force("warp_drive:X=1").__enter__(), ValueError),
    "set_strict('yes')": (lambda: cd.set_strict("yes"), TypeError),
    "set_chooser('best')": (lambda: cd.set_chooser("best"), ValueError),
    "set_chooser(object())": (lambda: cd.set_chooser(object()), TypeError),
    "replace_convs(tensor)": (lambda: cd.replace_convs(_X), TypeError),
    "op dims=4": (lambda: torch.ops.convdispatch.conv(_X, _W, None, [1], [0], [1], 1, "none",
                                                      None, "", 4), ValueError),
    "op stride='1'": (lambda: torch.ops.convdispatch.conv(_X, _W, None, "1", [0], [1], 1,
                                                          "none", None, "", 2), RuntimeError),
    "op activation='tanh'": (lambda: torch.ops.convdispatch.conv(_X, _W, None, [1], [0], [1],
                                                                 1, "tanh", None, "", 2),
                             ValueError),
    "op padding_str='full'": (lambda: torch.ops.convdispatch.conv(_X, _W, None, [1], [0], [1],
                                                                  1, "none", None, "full", 2),
                              RuntimeError),
}


@pytest.mark.parametrize("name", sorted(ENTRY_MISUSE))
def test_entry_point_misuse_is_a_clear_error(name):
    call, exc = ENTRY_MISUSE[name]
    with pytest.raises(exc) as info:
        call()
    assert len(str(info.value)) > 10, "the message names the problem"
