"""The "backward" direction: dX and dW of one pass, in one kernel (``backward_grouped_flat``)
or by the two directions' choices (``backward_pair``), as families of their own, swept,
featured, trained and chosen like the other directions: the model decides whether a pass
fuses."""

from __future__ import annotations

import dataclasses
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from convdispatch.dispatcher import autograd, explain, fused_pair, registry, selection
from convdispatch.dispatcher.launch import empty_grad
from convdispatch.dispatcher.model_chooser import ModelChooser
from convdispatch.dispatcher.selection import RULE
from convdispatch.dispatcher.settings import force
from convdispatch.heuristics import features as F
from convdispatch.heuristics import model_store
from convdispatch.heuristics.model_store import ModelLoadError, load_model
from convdispatch.heuristics.synthetic import synthetic_sweep
from convdispatch.heuristics.train import HyperParams, train
from convdispatch.kernels import backward_grouped_flat as fused
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.device import INTERPRETER, KNOWN
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.validation.inputs import rel_err

H100 = KNOWN["h100"]
CL = dict(dtype="float16", layout="channels_last")
# ResNeXt-50 layer1.0's grouped 3x3 at batch 32 (fused by the shipped models) and a strided
# layer with groups of 8 channels.
LAYER1 = ConvGeometry(n=32, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1), **CL)
STRIDED = ConvGeometry(n=8, c=256, k=256, g=32, h=28, w=28, r=3, s=3, stride=(1, 2, 2),
                       pad=(0, 1, 1), **CL)
DENSE = ConvGeometry(n=8, c=64, k=64, h=28, w=28, r=3, s=3, pad=(0, 1, 1), **CL)
TINY = HyperParams(n_estimators=8, num_leaves=7, min_data_in_leaf=3, num_threads=1)


def _col(name: str) -> int:
    return F.FEATURE_NAMES.index(name)


PAIR = Candidate("backward_pair", Config())
# ResNeXt3D-50 layer3.1 at batch 8: the two kernels overlap, 1.47x faster than the fused
# kernel's best (call 221); the shipped model keeps them.
LAYER3D = ConvGeometry(n=8, c=512, k=512, g=32, d=2, h=7, w=7, t=3, r=3, s=3, pad=(1, 1, 1),
                       dims=3, **CL)


def _fused(cands):
    return [c for c in cands if c.family == "backward_grouped_flat"]


def test_the_directions_families():
    """The fused kernel's configs and the pair (one candidate, no config) on the geometries
    the fused kernel takes, 2D and 3D; nothing elsewhere."""
    assert [f.name for f in registry.families("backward")] == ["backward_grouped_flat",
                                                              "backward_pair"]
    for geom in (LAYER1, LAYER3D):
        cands = registry.candidates(geom, H100, "backward")
        assert cands[-1] == PAIR and len(_fused(cands)) == len(cands) - 1 > 0
        assert all(fused.config_rejects(geom, c.config, H100) is None for c in _fused(cands))
    assert registry.candidates(DENSE, H100, "backward") == []
    # the fused kernel is Gluon: the interpreter gets the pair only (its kernels interpret)
    assert registry.candidates(LAYER1, INTERPRETER, "backward") == [PAIR]


@pytest.mark.parametrize("geom", [LAYER1, STRIDED], ids=["layer1", "strided"])
def test_features_are_the_wgrad_kernels_with_the_fused_grid(geom):
    """Rows carry wgrad_grouped_flat's one-hot and direction (the kernel they extend) and
    the fused kernel's own launch grid: items over its balanced rows."""
    cands = _fused(registry.candidates(geom, H100, "backward"))
    X = F.feature_matrix(geom, cands, H100).astype(np.float64)
    assert np.isfinite(X).all()
    assert (X[:, _col("fam_wgrad_grouped_flat")] == 1.0).all()
    assert (X[:, _col("dir_wgrad")] == 1.0).all()
    for cand, row in zip(cands, X):
        assert row[_col("k_steps")] == fused.items(geom, cand.config), cand.id
        grid = registry.family(cand.family).grid(geom, cand.config)
        assert row[_col("view_log2_mult")] == pytest.approx(math.log2(grid.mult), abs=1e-5)
    # the feature schema (and so every other model) is untouched
    assert "fam_backward_grouped_flat" not in F.FEATURE_NAMES


def test_the_pair_is_featured_as_the_dx_flat_kernel_with_its_problem_size():
    """The pair's row: dgrad_grouped_flat's one-hot (apart from the fused rows), knobs of 1
    (it has none), and its grid: the pass as one tile of dX's GEMM."""
    assert "fam_backward_pair" not in F.FEATURE_NAMES
    for geom in (LAYER1, LAYER3D):
        X = F.feature_matrix(geom, [PAIR], H100).astype(np.float64)
        assert np.isfinite(X).all()
        assert X[0, _col("fam_dgrad_grouped_flat")] == 1.0
        assert X[0, _col("fam_wgrad_grouped_flat")] == 0.0
        assert X[0, _col("BLOCK_M")] == X[0, _col("BLOCK_N")] == 1.0
        pixels = geom.n * geom.d * geom.h * geom.w
        assert X[0, _col("view_log2_m")] == pytest.approx(math.log2(pixels), abs=1e-5)


def test_the_rule_chooser_fuses_where_the_rule_does(monkeypatch, clean_dispatcher):
    """Without a model: the fused kernel's rule config where wgrad picks the flat kernel
    and it fills the SMs, else the pair."""
    _wgrad_takes_the_flat_kernel(monkeypatch)
    for geom in (LAYER1, STRIDED):
        dec = RULE.choose(geom, registry.candidates(geom, H100, "backward"), H100)
        assert dec.candidate == Candidate("backward_grouped_flat",
                                          fused.rule_config(geom, H100))
        assert "own config rule" in dec.reason
    # too few programs at batch 1
    assert RULE.choose(SMALL, registry.candidates(SMALL, H100, "backward"),
                       H100).candidate == PAIR
    _wgrad_takes_the_flat_kernel(monkeypatch, "wgrad_grouped_halo")
    assert RULE.choose(LAYER1, registry.candidates(LAYER1, H100, "backward"),
                       H100).candidate == PAIR


# ResNeXt-50 layer1.0 at batch 1: the rule's gate keeps the two kernels (too few programs),
# the shipped model fuses.
SMALL = dataclasses.replace(LAYER1, n=1)


def _wgrad_takes_the_flat_kernel(monkeypatch, family: str = fused_pair.WGRAD):
    from convdispatch.dispatcher import api

    pair = (Candidate("dgrad_grouped_packed", Config()), Candidate(family, Config()))
    monkeypatch.setattr(api, "chosen_pair", lambda geom, dev: pair)


def test_pair_config_is_the_backward_choice(monkeypatch, clean_dispatcher):
    """The shipped model decides: the fused kernel at batch 1 where the rule's gate kept the
    two kernels, the pair on ResNeXt3D-50 layer3.1 where the rule fused; with the rule
    chooser, the rule's gate."""
    _wgrad_takes_the_flat_kernel(monkeypatch)
    assert fused.rule_config(SMALL, H100) is not None and fused.pair_config(SMALL, H100) is None
    model = selection.chooser_for(H100, "backward")
    picked = model.choose(SMALL, registry.candidates(SMALL, H100, "backward"), H100).candidate
    assert picked.family == "backward_grouped_flat"
    assert fused_pair.pair_config(SMALL, H100) == picked.config
    assert fused.pair_config(LAYER3D, H100) is not None
    assert fused_pair.pair_config(LAYER3D, H100) is None
    fused_pair.CONFIGS.clear()
    monkeypatch.setattr(selection, "_override", RULE)
    assert fused_pair.pair_config(SMALL, H100) is None
    assert fused_pair.pair_config(LAYER3D, H100) == fused.rule_config(LAYER3D, H100)


def test_a_forced_backward_candidate_runs_on_every_pass(clean_dispatcher):
    small = ConvGeometry(n=1, c=128, k=128, g=32, h=56, w=56, r=3, s=3, pad=(0, 1, 1), **CL)
    cfg = fused.CONFIGS[0]
    with force(Candidate("backward_grouped_flat", cfg)):
        assert fused_pair.pair_config(small, H100) == cfg
        with pytest.raises(ValueError, match="cannot run"):
            fused_pair.pair_config(DENSE, H100)
    with force(PAIR):
        assert fused_pair.pair_config(LAYER1, H100) is None
    assert fused_pair.pair_config(LAYER1, H100) is not None


def test_pair_tensors_and_reference():
    """The sweep's pieces for a pass: an output pair, cuDNN's (torch's) pair as reference
    and baseline, and the error of the worse of the two."""
    geom = ConvGeometry(n=2, c=16, k=16, g=4, h=9, w=7, r=3, s=3, pad=(0, 1, 1),
                        dtype="float32")
    x, w = torch.randn(2, 16, 9, 7), torch.randn(16, 4, 3, 3)
    dy = torch.randn(2, 16, 9, 7)
    dx, dw = empty_grad("backward", x, w)
    assert dx.shape == x.shape and dw.shape == w.shape
    gx, gw = autograd.torch_grad(geom, "backward", dy, x, w)
    assert torch.equal(gx, autograd.torch_grad(geom, "dgrad", dy, x, w))
    assert torch.equal(gw, autograd.torch_grad(geom, "wgrad", dy, x, w))
    assert rel_err((gx, gw), (gx, gw)) == 0.0
    worse = rel_err((gx, gw * 1.5), (gx, gw))
    assert worse == pytest.approx(0.5, rel=1e-6)
    with pytest.raises(ValueError, match="differ in kind"):
        rel_err(gx, (gx, gw))
    with pytest.raises(ValueError, match="'backward'"):
        autograd.torch_grad(geom, "both", dy, x, w)


def test_the_rule_decides_a_pass_from_the_directions_decisions(clean_dispatcher):
    """Under the rule chooser the "backward" decision, made under the decision cache's
    lock, makes the dgrad and wgrad decisions it reads (it waited on itself before the
    lock was reentrant: a bfloat16 training step on the interpreter hung)."""
    import threading

    from convdispatch.dispatcher import set_chooser
    from convdispatch.dispatcher.api import decide

    set_chooser("rule")
    got = []
    t = threading.Thread(target=lambda: got.append(decide(LAYER1, H100,
                                                          direction="backward")),
                         daemon=True)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive(), "the backward decision waits on itself"
    assert got[0].candidate.family in ("backward_grouped_flat", "backward_pair")
    assert got[0].candidate.family == ("backward_grouped_flat"
                                       if fused_pair.rule_fuses(LAYER1, H100)
                                       else "backward_pair")


def test_the_pair_candidate_runs_the_two_directions(clean_dispatcher):
    """``backward_pair`` through the sweep's path (the interpreter: its only candidate
    there) gives torch's (dX, dW), into its own outputs, not the fused kernel's."""
    from convdispatch.dispatcher.launch import run_grad_candidate
    from convdispatch.validation.inputs import make_grad_output, make_inputs, tolerance

    geom = ConvGeometry(n=1, c=32, k=32, g=4, h=6, w=5, r=3, s=3, pad=(0, 1, 1), **CL)
    x, w, _ = make_inputs(geom, "cpu", 7)
    dy = make_grad_output(geom, "cpu", 7)
    assert registry.candidates(geom, INTERPRETER, "backward") == [PAIR]
    ref = autograd.torch_grad(geom, "backward", dy.float(), x.float(), w.float())
    got = run_grad_candidate(PAIR, "backward", dy, x, w, geom)
    assert isinstance(got, tuple) and len(got) == 2
    assert got[0].shape == x.shape and got[1].shape == w.shape
    assert rel_err(tuple(t.float() for t in got), ref) < tolerance(geom.dtype)
    assert fused_pair.pair_config(geom, INTERPRETER) is None


def test_fake_sweep_of_the_direction(tmp_path):
    """`convdispatch sweep --direction backward` measures the fused kernel's configs and
    the pair, on the problems the fused kernel takes, counting a pass as two convs'
    work."""
    from convdispatch.data.problems import load_problems
    from convdispatch.validation.backends import FakeBackend
    from convdispatch.validation.sweep import run_sweep

    out = tmp_path / "bwd.csv"
    problems = [p for p in load_problems("resnext50_32x4d", None) if "/n8/" in p.id]
    run_sweep(problems, out, backend=FakeBackend(direction="backward"), quiet=True,
              command=["test"])
    df = pd.read_csv(out)
    assert set(df["family"]) == {"backward_grouped_flat", "backward_pair"}
    assert (df[df["family"] == "backward_pair"].groupby("problem_id").size() == 1).all()
    assert df["problem_id"].str.contains("conv2").all()  # the grouped 3x3s only
    row = df[df["ok"] == 1].iloc[0]
    geom = ConvGeometry.from_row(row)
    assert row["tflops"] == pytest.approx(2 * geom.flops / row["latency_us"] / 1e6, rel=1e-6)
    # dY, X and W read, dX and dW written: dY once (as bench_backward counts a pass)
    assert geom.pass_bytes == geom.min_bytes + (geom.n * geom.c * geom.d * geom.h * geom.w
                                                + geom.k * geom.cg * geom.t * geom.r
                                                * geom.s) * geom.elem_bytes
    assert row["gbps"] == pytest.approx(geom.pass_bytes / row["latency_us"] / 1e3, rel=1e-6)
    meta = json.loads(out.with_suffix(".meta.json").read_text())
    assert meta["harness"]["direction"] == "backward"


@pytest.fixture(scope="module")
def backward_model(tmp_path_factory):
    pytest.importorskip("lightgbm")
    d = tmp_path_factory.mktemp("backward")
    problems = [(f"p{i}", "syn", "l", ConvGeometry(
        n=n, c=c, k=c, g=g, h=h, w=h, r=3, s=3, pad=(0, 1, 1), **CL))
        for i, (n, c, g, h) in enumerate([(8, 128, 32, 28), (32, 128, 32, 56),
                                          (16, 256, 32, 28), (8, 512, 32, 14),
                                          (4, 256, 16, 28), (32, 256, 32, 14)])]
    df = synthetic_sweep(problems=problems,
                         candidates=lambda g, dev: registry.candidates(g, dev, "backward"))
    csv = d / "backward.csv"
    df.to_csv(csv, index=False)
    train([csv], d / "h100" / "backward", methods=["lgbm_lambdarank"], hp=TINY, folds=2,
          log=lambda _msg: None)
    return d / "h100" / "backward"


def test_a_backward_model_records_and_enforces_its_direction(backward_model):
    schema = json.loads((backward_model / "schema.json").read_text())
    assert schema["direction"] == "backward"
    assert schema["families"] == ["backward_grouped_flat", "backward_pair"]
    model = load_model(backward_model)
    ranked = model.rank(LAYER1, registry.candidates(LAYER1, H100, "backward"), H100)
    assert ranked and all(np.isfinite(s) for _, s in ranked)
    with pytest.raises(ModelLoadError, match="a backward model, not a wgrad one"):
        ModelChooser.load(backward_model, "wgrad")


def test_the_shipped_backward_model(clean_dispatcher):
    path = model_store.MODELS_ROOT / "h100" / "backward"
    model = load_model(path)
    assert model.direction == "backward"
    meta = json.loads((path / "meta.json").read_text())
    assert meta["data"]["files"] and all("bwd_backward" in f for f in meta["data"]["files"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chooser = selection.chooser_for(H100, "backward")
    assert chooser.identity == f"model-{model.identity}"
    # batch 1: the model fuses where the rule's gate kept the two kernels
    ex = explain(SMALL, gpu="h100", direction="backward")
    assert ex.chooser == "model" and ex.candidate.family == "backward_grouped_flat"
    assert ex.pair.startswith("a backward pass needing dX and dW runs both in one kernel")
    assert f"backward_grouped_flat:{ex.candidate.config}" in explain(
        SMALL, gpu="h100", direction="wgrad").pair
    # a geometry whose passes keep the two kernels says so
    ex = explain(LAYER3D, gpu="h100", direction="backward")
    assert ex.candidate == PAIR and "runs the dgrad and wgrad choices" in ex.pair


def test_bad_uses_say_what_is_wrong(clean_dispatcher):
    from convdispatch.dispatcher.api import decide
    from convdispatch.dispatcher.launch import run_candidate, run_grad_candidate
    from convdispatch.validation.probe_io import probe_gradients

    with pytest.raises(RuntimeError, match=r"no kernel family supports .* \(backward\)"):
        decide(DENSE, H100, direction="backward")
    cand = Candidate("backward_grouped_flat", fused.CONFIGS[0])
    x = torch.empty(2, 128, 8, 8, dtype=torch.float16)
    w = torch.empty(128, 4, 3, 3, dtype=torch.float16)
    geom = ConvGeometry(n=2, c=128, k=128, g=32, h=8, w=8, r=3, s=3, pad=(0, 1, 1), **CL)
    with pytest.raises(ValueError, match="computes backward, not forward"):
        run_candidate(cand, x, w, None, geom)
    with pytest.raises(TypeError, match="out must be a pair"):
        run_grad_candidate(cand, "backward", x, x, w, geom, out=x)
    with pytest.raises(ValueError, match="differ in kind"):
        rel_err((x, w), x)
    with pytest.raises(ValueError, match="one gradient"):
        probe_gradients("unused.csv", "backward", "p", lambda *a: None)
