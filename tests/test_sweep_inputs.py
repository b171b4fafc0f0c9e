"""The sweep's inputs, reference, error measure and timing helpers (CPU), plus one GPU sweep."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.validation.backends import CudaBackend, is_compile_error
from convdispatch.validation.inputs import (
    TOLERANCE,
    make_inputs,
    reference,
    rel_err,
    seed_of,
    tolerance,
)
from convdispatch.validation.timing import TimingSettings, cudnn_fn
from helpers import SweepProblem as P


def geom(**kw) -> ConvGeometry:
    base = dict(n=2, c=8, k=12, h=9, w=7, r=3, s=3, pad=(0, 1, 1))
    return ConvGeometry(**{**base, **kw})


@pytest.mark.parametrize("g,fmt", [
    (geom(), torch.channels_last),
    (geom(dtype="bfloat16", layout="contiguous", bias=True), torch.contiguous_format),
    (geom(dims=3, d=4, t=3, pad=(1, 1, 1), dtype="float32"), torch.channels_last_3d),
])
def test_make_inputs_dtype_layout_and_seed(g, fmt):
    x, w, b = make_inputs(g, "cpu", seed=5)
    lo = 3 - g.dims
    assert list(x.shape) == [g.n, g.c, *[g.d, g.h, g.w][lo:]]
    assert list(w.shape) == [g.k, g.cg, *[g.t, g.r, g.s][lo:]]
    assert x.dtype == w.dtype == {"float16": torch.float16, "bfloat16": torch.bfloat16,
                                  "float32": torch.float32}[g.dtype]
    assert x.is_contiguous(memory_format=fmt) and w.is_contiguous(memory_format=fmt)
    assert (b is not None) == g.bias
    assert (x != 0).float().mean() > 0.99 and (w != 0).float().mean() > 0.99  # never zeros
    assert x.float().std() > 0.5
    x2, w2, _ = make_inputs(g, "cpu", seed=5)
    x3, _, _ = make_inputs(g, "cpu", seed=6)
    assert torch.equal(x, x2) and torch.equal(w, w2) and not torch.equal(x, x3)


def test_seed_is_stable_and_spread():
    assert seed_of("a/b") == seed_of("a/b") and seed_of("a/b") != seed_of("a/c")
    assert 0 <= seed_of("x") < 2**31


@pytest.mark.parametrize("g", [
    geom(stride=(1, 2, 2), dilation=(1, 2, 1)),
    geom(c=8, k=16, g=4),
    geom(c=8, k=8, g=8, r=5, s=5, pad=(0, 2, 2)),
    geom(dims=3, d=5, t=3, pad=(1, 0, 1), stride=(2, 1, 1)),
])
def test_reference_matches_functional_in_float64(g):
    x, w, _ = make_inputs(g, "cpu", seed=1)
    ref = reference(g, x, w, None)
    assert ref.dtype == torch.float64
    conv = F.conv2d if g.dims == 2 else F.conv3d
    lo = 3 - g.dims
    want = conv(x.double(), w.double(), None, g.stride[lo:], g.pad[lo:], g.dilation[lo:], g.g)
    torch.testing.assert_close(ref, want)
    assert list(ref.shape[2:]) == list(g.out_spatial[lo:])


@pytest.mark.filterwarnings("ignore:Using padding='same'")
def test_reference_asymmetric_padding_is_torch_same():
    g = geom(r=2, s=4, pad=(0, 0, 1), pad_hi=(0, 1, 2))
    x, w, b = make_inputs(g, "cpu", seed=2)
    want = F.conv2d(x.double(), w.double(), padding="same")
    torch.testing.assert_close(reference(g, x, w, b), want)


def test_rel_err_measure():
    ref = torch.randn(4, 5, 6, dtype=torch.float64)
    assert rel_err(ref.clone(), ref) == 0.0
    assert rel_err(ref * (1 + 1e-3), ref) == pytest.approx(1e-3, rel=1e-6)
    bad = ref.clone()
    bad[0, 0, 0] = float("nan")
    assert rel_err(bad, ref) == math.inf
    bad[0, 0, 0] = float("inf")
    assert rel_err(bad, ref) == math.inf
    assert rel_err(torch.zeros(2), torch.zeros(2)) == 0.0
    with pytest.raises(ValueError, match="shape"):
        rel_err(ref[0], ref)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_tolerance_passes_rounding_and_fails_a_dropped_channel_block(dtype):
    g = geom(n=4, c=64, k=32, h=12, w=12, dtype=dtype)
    x, w, _ = make_inputs(g, "cpu", seed=3)
    ref = reference(g, x, w, None)
    rounded = ref.to(x.dtype)  # a correct kernel: exact sums, one rounding of the output
    assert rel_err(rounded, ref) < tolerance(dtype) / 5
    w_bad = w.clone()
    w_bad[:, :16] = 0  # a kernel that skips one 16-channel block of 64
    wrong = reference(g, x, w_bad, None).to(x.dtype)
    assert rel_err(wrong, ref) > tolerance(dtype)


def test_tolerance_table():
    assert set(TOLERANCE) == {"float16", "bfloat16", "float32"}
    assert TOLERANCE["bfloat16"] > TOLERANCE["float16"]
    with pytest.raises(ValueError, match="int8"):
        tolerance("int8")


def test_cudnn_fn_is_the_functional_conv():
    g = geom(pad=(0, 0, 0), pad_hi=(0, 1, 0), dtype="float32")
    x, w, b = make_inputs(g, "cpu", seed=4)
    fn = cudnn_fn(g, x, w, b)
    torch.testing.assert_close(fn().double(), reference(g, x, w, b), rtol=1e-4, atol=1e-4)


def test_timing_settings_validate():
    assert TimingSettings().as_dict()["quantiles"] == [0.5, 0.2, 0.8]
    with pytest.raises(ValueError, match="rep_ms"):
        TimingSettings(rep_ms=0)
    with pytest.raises(ValueError, match="quantiles"):
        TimingSettings(quantiles=(0.5, 1.2, 0.8))


def test_compile_errors_are_told_from_runtime_errors():
    from triton.compiler.errors import CompilationError
    from triton.runtime.errors import OutOfResources

    assert is_compile_error(OutOfResources(300000, 232448, "shared memory"))
    assert is_compile_error(RuntimeError("PassManager::run failed"))
    assert not is_compile_error(RuntimeError("CUDA error: an illegal memory access"))
    assert issubclass(CompilationError, Exception)




@pytest.mark.gpu
def test_cuda_backend_sweeps_a_problem(tmp_path):
    from convdispatch.validation.sweep import run_sweep
    from convdispatch.validation.sweep_csv import read_sweep

    problems = [P(f"gpu/l{i}/n4/{dt}", "gpu", f"l{i}", geom(n=4, c=64, k=64, h=14, w=14,
                                                            dtype=dt))
                for i, dt in enumerate(("float16", "float32"))]
    backend = CudaBackend(timing=TimingSettings(warmup_ms=5, rep_ms=20))
    out = tmp_path / "gpu.csv"
    summary = run_sweep(problems, out, backend=backend, jobs=2, limit_candidates=4, quiet=True)
    df = read_sweep(out)
    assert summary["rows_written"] == len(df) > 0
    assert (df.status == "ok").all(), df[df.status != "ok"][["config", "status", "error"]]
    assert (df.latency_us > 0).all() and (df.cudnn_us > 0).all()
    for dt, part in df.groupby("dtype"):
        assert (part.rel_err <= tolerance(dt)).all()
    assert df.gpu.iloc[0] == torch.cuda.get_device_name()
