"""Taps that read only padding: which they are, the smaller convolution without them, and
the forward dispatch running it (interpreter), its plans, features, explain() and the
sweep's retire option."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from convdispatch import cli, conv2d, conv3d, explain
from convdispatch.dispatcher import api, registry, set_chooser
from convdispatch.heuristics.features import feature_matrix
from convdispatch.kernels.dead_taps import (
    has_dead_taps,
    live_filter,
    live_tap_range,
    live_window,
    trim_dead_taps,
)
from convdispatch.kernels.device import lookup
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.validation.backends import FakeBackend
from convdispatch.validation.sweep import run_sweep
from convdispatch.validation.sweep_csv import read_sweep
from helpers import PickFamily, rel_err
from helpers import SweepProblem as P

# ResNeXt3D-50's layer4.1.conv2 on a one-frame clip (scaled down): only the middle depth
# tap reads input; layer4.0's strided twin on two frames keeps the last two depth taps.
ONE_FRAME = ConvGeometry(n=1, c=64, k=64, g=8, d=1, h=4, w=4, t=3, r=3, s=3, pad=(1, 1, 1),
                         dims=3)
TWO_FRAMES = ConvGeometry(n=1, c=64, k=64, g=8, d=2, h=7, w=7, t=3, r=3, s=3,
                          stride=(2, 2, 2), pad=(1, 1, 1), dims=3)


def brute_live(size, taps, stride, lo, hi, dil):
    """Taps of one axis that read an input element for some output, by enumeration."""
    out = (size + lo + hi - dil * (taps - 1) - 1) // stride + 1
    return [j for j in range(taps)
            if any(0 <= o * stride - lo + j * dil < size for o in range(out))]


def test_live_range_is_the_first_and_last_tap_that_reads_input():
    checked = dead = 0
    for size, taps, stride, lo, hi, dil in itertools.product(
            (1, 2, 3, 5), (1, 2, 3, 5), (1, 2, 3), (0, 1, 2, 4), (0, 1, 3), (1, 2)):
        if size + lo + hi - dil * (taps - 1) - 1 < 0:
            continue  # no output
        live = brute_live(size, taps, stride, lo, hi, dil)
        want = (live[0], live[-1]) if live else (0, taps - 1)
        assert live_tap_range(size, taps, stride, lo, hi, dil) == want, (size, taps, stride)
        checked += 1
        dead += want != (0, taps - 1)
    assert checked > 500 and dead > 100


def test_one_frame_clip_keeps_the_middle_depth_tap():
    live = trim_dead_taps(ONE_FRAME)
    assert (live.t, live.r, live.s) == (1, 3, 3)
    assert live.pad == (0, 1, 1) and live.pad_hi is None
    assert live.out_spatial == ONE_FRAME.out_spatial
    strided = trim_dead_taps(TWO_FRAMES)
    assert (strided.t, strided.pad[0], strided.pads_hi[0]) == (2, 0, 1)
    assert strided.out_spatial == TWO_FRAMES.out_spatial
    # Idempotent, and a geometry without dead taps is returned as it is.
    assert trim_dead_taps(live) == live and not has_dead_taps(live)
    plain = ConvGeometry(n=2, c=8, k=8, h=6, w=6, r=3, s=3, pad=(0, 1, 1))
    assert trim_dead_taps(plain) == plain


def test_a_dilated_axis_whose_padding_would_go_negative_is_kept():
    # Dilation 3 on a 2-wide map padded (2, 3): only tap 1 reads input, but dropping tap 0
    # would need padding 2 - 3 on the low side.
    geom = ConvGeometry(n=1, c=4, k=4, h=2, w=2, r=3, s=3, pad=(0, 2, 2), pad_hi=(0, 3, 3),
                        dilation=(1, 3, 3))
    assert brute_live(2, 3, 1, 2, 3, 3) == [1]
    assert live_window(geom)[1] == (0, 3) and trim_dead_taps(geom) == geom


def _torch_pads(geom: ConvGeometry) -> list[int]:
    """F.pad's list (last axis first) of a geometry's low and high padding."""
    lead = 3 - geom.dims
    return [v for lo, hi in zip(reversed(geom.pad[lead:]), reversed(geom.pads_hi[lead:]))
            for v in (lo, hi)]


@pytest.mark.parametrize("d,h,stride,pad,dil", [
    (1, 4, 1, 1, 1), (2, 7, 2, 1, 1), (1, 1, 1, 1, 1), (3, 2, 3, 2, 1), (2, 5, 1, 2, 2),
    (1, 3, 2, 2, 1),
])
def test_the_trimmed_conv_is_the_same_conv(d, h, stride, pad, dil):
    """torch in float64: the stored conv and the smaller one over the filter's view agree."""
    geom = ConvGeometry(n=2, c=4, k=6, g=2, d=d, h=h, w=h + 1, t=3, r=3, s=3,
                        stride=(stride,) * 3, pad=(pad,) * 3, dilation=(dil,) * 3, dims=3)
    gen = torch.Generator().manual_seed(d * 100 + h)
    x = torch.randn(2, 4, d, h, h + 1, generator=gen, dtype=torch.float64)
    w = torch.randn(6, 2, 3, 3, 3, generator=gen, dtype=torch.float64)
    live = trim_dead_taps(geom)
    ref = F.conv3d(x, w, stride=stride, padding=pad, dilation=dil, groups=2)
    got = F.conv3d(F.pad(x, _torch_pads(live)), live_filter(w, geom), stride=stride,
                   dilation=dil, groups=2)
    assert got.shape == ref.shape
    assert rel_err(got, ref) < 1e-12
    assert live_filter(w, geom).data_ptr() >= w.data_ptr(), "a view, not a copy"
    assert live_filter(w, geom).untyped_storage().data_ptr() == w.untyped_storage().data_ptr()


@pytest.mark.parametrize("cl", [True, False])
def test_conv3d_runs_without_the_dead_taps(clean_dispatcher, monkeypatch, cl):
    """The forward dispatch chooses among the trimmed geometry's candidates and launches
    the filter's view; the output is torch's (bias, and a residual, in the epilogue)."""
    from convdispatch.dispatcher import launch

    ran = []
    monkeypatch.setattr(launch, "_run", lambda cand, call, *a, _run=launch._run: (
        ran.append(call), _run(cand, call, *a))[1])
    fmt = torch.channels_last_3d if cl else torch.contiguous_format
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(2, 16, 1, 3, 3, generator=gen).to(memory_format=fmt)
    w = (torch.randn(8, 4, 3, 3, 3, generator=gen) / 6).to(memory_format=fmt)
    b = torch.randn(8, generator=gen)
    res = torch.randn(2, 8, 1, 3, 3, generator=gen).to(memory_format=fmt)
    out = conv3d(x, w, b, padding=1, groups=4, residual=res)
    ref = F.conv3d(x.double(), w.double(), b.double(), padding=1, groups=4) + res.double()
    assert rel_err(out, ref) < 1e-5
    geom = ConvGeometry(n=2, c=16, k=8, g=4, d=1, h=3, w=3, t=3, r=3, s=3, pad=(1, 1, 1),
                        dims=3, dtype="float32", layout="channels_last" if cl else "contiguous",
                        bias=True)
    dev = lookup("h100")
    assert registry.candidates(geom, dev) == registry.candidates(trim_dead_taps(geom), dev)
    (call,) = ran
    assert call.geom == trim_dead_taps(geom) and call.w.shape[2:] == (1, 3, 3)
    assert call.w.data_ptr() == w[:, :, 1].data_ptr()
    (entry,) = api.PLANS.values()
    # The recorded plan rebinds the filter's view to the next call's filter.
    w2 = (torch.randn(8, 4, 3, 3, 3, generator=gen) / 6).to(memory_format=fmt)
    out2 = conv3d(x, w2, b, padding=1, groups=4, residual=res)
    assert list(api.PLANS.values()) == [entry], "replayed, not decided again"
    ref2 = F.conv3d(x.double(), w2.double(), b.double(), padding=1, groups=4) + res.double()
    assert rel_err(out2, ref2) < 1e-5


def test_conv2d_on_a_one_pixel_map_runs_as_a_pointwise_conv(clean_dispatcher):
    """A 3x3 filter, padding 1, on a 1x1 map: only the centre tap reads input."""
    set_chooser(PickFamily("pointwise"))
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(3, 16, 1, 1, generator=gen)
    w = torch.randn(32, 16, 3, 3, generator=gen) / 4
    out = conv2d(x, w, padding=1)
    assert rel_err(out, F.conv2d(x.double(), w.double(), padding=1)) < 1e-5


def test_features_and_explain_describe_the_geometry_the_kernel_runs():
    dev = lookup("h100")
    cands = registry.candidates(ONE_FRAME, dev)
    assert (feature_matrix(ONE_FRAME, cands, dev)
            == feature_matrix(trim_dead_taps(ONE_FRAME), cands, dev)).all()
    text = str(explain(ONE_FRAME, gpu="h100"))
    assert "taps     : a 3x3x3 filter runs as 1x3x3" in text
    assert "taps" not in str(explain(trim_dead_taps(ONE_FRAME), gpu="h100"))
    # Gradient directions keep the stored geometry.
    assert explain(ONE_FRAME, gpu="h100", direction="dgrad").live_taps is None


def test_retire_dead_taps_sets_aside_those_problems_rows(tmp_path, capsys):
    plain = ConvGeometry(n=1, c=16, k=16, h=6, w=6, r=3, s=3, pad=(0, 1, 1))
    problems = [P("unit/plain/n1/float16", "unit", "plain", plain),
                P("unit/frame/n1/float16", "unit", "frame", ONE_FRAME)]
    out = tmp_path / "s.csv"
    run_sweep(problems, out, backend=FakeBackend(), jobs=1, limit_candidates=3, quiet=True,
              command=["test"])
    before = read_sweep(out)
    assert cli.main(["retire", "--dead-taps", str(out)]) == 0
    frame_rows = (before.problem_id == "unit/frame/n1/float16").sum()
    assert frame_rows and f"{frame_rows} rows of problems with dead taps moved" in \
        capsys.readouterr().out
    after = read_sweep(out)
    assert set(after.problem_id) == {"unit/plain/n1/float16"}
    retired = pd.read_csv(tmp_path / "s.retired.csv")
    assert set(retired.problem_id) == {"unit/frame/n1/float16"}


@pytest.mark.gpu
@pytest.mark.parametrize("layer", ["layer4.0", "layer4.1"])
def test_gpu_each_family_runs_resnext3d_layers_without_their_dead_taps(layer):
    """ResNeXt3D-50's layer4 grouped convs on one image of an 8-frame clip (depth 2 and 1
    at layer4): the first candidate of every forward family, through the sweep's path,
    against torch. (The sweep checks every candidate the same way.)"""
    from convdispatch.kernels.device import spec_of
    from helpers import check_candidates_on_gpu

    geom = (ConvGeometry(n=1, c=1024, k=1024, g=32, d=2, h=7, w=7, t=3, r=3, s=3,
                         stride=(2, 2, 2), pad=(1, 1, 1), dims=3) if layer == "layer4.0"
            else ConvGeometry(n=1, c=1024, k=1024, g=32, d=1, h=4, w=4, t=3, r=3, s=3,
                              pad=(1, 1, 1), dims=3))
    assert has_dead_taps(geom)
    cands = registry.candidates(geom, spec_of(torch.device("cuda")))
    firsts = {}
    for c in cands:
        firsts.setdefault(c.family, c)
    assert {"grouped_packed", "grouped_gemm"} <= set(firsts)
    check_candidates_on_gpu(list(firsts.values()), geom, tol=1e-2)
