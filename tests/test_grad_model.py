"""Per-direction models: gradient features (schema v5), one direction per model directory,
the dispatcher choosing gradient kernels with them, and the shipped dgrad/wgrad models."""

from __future__ import annotations

import json
import math
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from convdispatch.dispatcher import decide, explain, registry, selection
from convdispatch.dispatcher.model_chooser import ModelChooser
from convdispatch.heuristics import features as F
from convdispatch.heuristics import model_store
from convdispatch.heuristics.dataset import direction_of, load_dataset
from convdispatch.heuristics.model_store import ModelLoadError, load_model
from convdispatch.heuristics.synthetic import synthetic_sweep
from convdispatch.heuristics.train import HyperParams, train
from convdispatch.kernels.device import KNOWN
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.kernels.grad_common import forward_gemm_view

lgb = pytest.importorskip("lightgbm")

H100 = KNOWN["h100"]
GROUPED = ConvGeometry(n=4, c=64, k=64, g=8, h=14, w=14, r=3, s=3, stride=(1, 2, 2),
                       pad=(0, 1, 1))
DEPTHWISE = ConvGeometry(n=2, c=32, k=32, g=32, h=20, w=20, r=3, s=3, pad=(0, 1, 1))
DENSE = ConvGeometry(n=8, c=64, k=128, h=28, w=28, r=3, s=3, pad=(0, 1, 1))
TINY = HyperParams(n_estimators=8, num_leaves=7, min_data_in_leaf=3, num_threads=1)


def _col(name: str) -> int:
    return F.FEATURE_NAMES.index(name)


STRIDED = ConvGeometry(n=2, c=32, k=48, h=15, w=13, r=3, s=3, stride=(1, 2, 2),
                       pad=(0, 1, 1))
THIN_DW = ConvGeometry(n=2, c=8, k=8, g=8, h=12, w=12, r=5, s=5, pad=(0, 2, 2))
POINTWISE_S2 = ConvGeometry(n=4, c=64, k=128, h=14, w=14, r=1, s=1, stride=(1, 2, 2))
GROUPED_S1 = ConvGeometry(n=4, c=64, k=64, g=16, h=14, w=14, r=3, s=3, pad=(0, 1, 1))
STEM = ConvGeometry(n=2, c=3, k=64, h=32, w=32, r=7, s=7, stride=(1, 2, 2), pad=(0, 3, 3))


def _launch_grids(monkeypatch, geom: ConvGeometry, cand, direction: str) -> list:
    """The grids a gradient candidate's launcher asks for (nothing runs); the filter copy
    that the grouped forward twins launch first is data preparation, not the conv's grid."""
    from convdispatch.dispatcher.launch import empty_grad, launch_grad
    from convdispatch.kernels import (
        depthwise,
        depthwise_span,
        dgrad_forward,
        dgrad_gemm,
        dgrad_stem,
        grad_direct,
        grouped_flat,
        grouped_packed,
        grouped_rows,
        implicit_gemm,
        implicit_gemm_tma,
        pointwise,
        pointwise_tma,
        splitk,
        wgrad_depthwise_rows,
        wgrad_depthwise_span,
        wgrad_depthwise_taps,
        wgrad_gemm,
        wgrad_grouped_flat,
        wgrad_grouped_halo,
        wgrad_grouped_taps,
        wgrad_implicit_gemm_tma,
        wgrad_staged_tma,
        wgrad_stem,
    )

    grids = []
    # Copies before the family's own grid: the staged X and dY of wgrad_staged_tma.
    prepasses = (wgrad_staged_tma.stage_kernel,)
    for mod in (depthwise, depthwise_span, dgrad_forward, dgrad_gemm, dgrad_stem, grad_direct,
                grouped_flat, grouped_packed, grouped_rows, implicit_gemm, implicit_gemm_tma,
                pointwise, pointwise_tma, splitk, wgrad_depthwise_rows, wgrad_depthwise_span,
                wgrad_depthwise_taps, wgrad_gemm, wgrad_grouped_flat, wgrad_grouped_halo,
                wgrad_grouped_taps, wgrad_implicit_gemm_tma, wgrad_staged_tma, wgrad_stem):
        monkeypatch.setattr(mod, "launch_kernel", lambda k, grid, *a, **kw: (
            None if k in prepasses else grids.append(grid)))
    od, oh, ow = geom.out_spatial
    x = torch.randn(geom.n, geom.c, geom.h, geom.w)
    w = torch.randn(geom.k, geom.cg, geom.r, geom.s)
    dy = torch.randn(geom.n, geom.k, oh, ow)
    if geom.layout == "channels_last":  # so the TMA families take their TMA path
        x, w, dy = (t.to(memory_format=torch.channels_last) for t in (x, w, dy))
    launch_grad(cand, geom, dy, x=x, w=w, out=empty_grad(direction, x, w))
    return grids


@pytest.mark.parametrize("direction", ["dgrad", "wgrad"])
@pytest.mark.parametrize("geom", [GROUPED, DEPTHWISE, DENSE, STRIDED, THIN_DW, POINTWISE_S2,
                                  GROUPED_S1, STEM],
                         ids=["grouped", "dw", "dense", "strided", "dw5x5", "pointwise_s2",
                              "grouped_s1", "stem"])
def test_gradient_features_count_the_launch_grid(direction, geom, monkeypatch):
    """programs = the launcher's real grid (first launch: the reduction of a split is
    separate), and the view columns are the family's grid."""
    cands = registry.candidates(geom, H100, direction)
    assert cands
    X = F.feature_matrix(geom, cands, H100).astype(np.float64)
    assert np.isfinite(X).all()
    dirs = X[:, [_col("dir_forward"), _col("dir_dgrad"), _col("dir_wgrad")]]
    assert (dirs == [0.0, float(direction == "dgrad"), float(direction == "wgrad")]).all()
    for cand, row in zip(cands, X):
        grids = _launch_grids(monkeypatch, geom, cand, direction)
        assert grids, cand.id
        assert row[_col("programs")] == math.prod(grids[0]), cand.id
        grid = registry.family(cand.family).grid(geom, cand.config)
        view = row[[_col(f"view_log2_{v}") for v in ("m", "n", "red", "mult")]]
        assert np.allclose(view, [math.log2(max(v, 1)) for v in (grid.m, grid.n, grid.red,
                                                                    grid.mult)], atol=1e-5)
        assert row[_col(f"fam_{cand.family}")] == 1.0
    assert len({c.family for c in cands}) >= 2 or geom.g == 1


def test_forward_rows_carry_the_forward_view():
    cands = registry.candidates(DENSE, H100)
    X = F.feature_matrix(DENSE, cands, H100).astype(np.float64)
    assert (X[:, _col("dir_forward")] == 1.0).all()
    want = [math.log2(max(v, 1)) for v in forward_gemm_view(DENSE)]
    got = X[:, [_col(f"view_log2_{v}") for v in ("m", "n", "red", "mult")]]
    assert np.allclose(got, want, atol=1e-5)


def test_every_family_has_one_direction_matching_the_registry():
    for fam in registry.families(direction=None):
        assert F.FAMILY_DIRECTION[fam.name] == fam.direction, fam.name


def _grad_csv(tmp_path: Path, direction: str, n: int = 14, seed: int = 3) -> Path:
    df = synthetic_sweep(n_problems=n, seed=seed,
                         candidates=lambda g, d: registry.candidates(g, d, direction))
    path = tmp_path / f"{direction}.csv"
    df.to_csv(path, index=False)
    return path


def test_training_refuses_sweeps_of_two_directions(tmp_path):
    fwd = synthetic_sweep(n_problems=4, seed=1)
    grad = pd.read_csv(_grad_csv(tmp_path, "dgrad", n=4))
    mixed = tmp_path / "mixed.csv"
    # Distinct problem ids so that only the directions clash.
    grad["problem_id"] = grad["problem_id"] + "-dgrad"
    pd.concat([fwd, grad]).to_csv(mixed, index=False)
    with pytest.raises(ValueError, match=r"mix directions \(.*mixed.csv: dgrad, forward\)"):
        load_dataset([mixed])
    bogus = fwd.assign(family="winograd")
    with pytest.raises(ValueError, match="unknown kernel family 'winograd'"):
        direction_of(bogus)


@pytest.fixture(scope="module")
def dgrad_model(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("dgrad")
    csv = _grad_csv(d, "dgrad")
    train([csv], d / "h100" / "dgrad", methods=["lgbm_lambdarank"], hp=TINY, folds=2,
          log=lambda _msg: None)
    return d / "h100" / "dgrad"


def test_a_gradient_model_records_and_enforces_its_direction(dgrad_model, tmp_path):
    schema = json.loads((dgrad_model / "schema.json").read_text())
    meta = json.loads((dgrad_model / "meta.json").read_text())
    assert schema["direction"] == meta["direction"] == "dgrad"
    assert all(F.FAMILY_DIRECTION[f] == "dgrad" for f in schema["families"])
    model = load_model(dgrad_model)
    assert model.direction == "dgrad"
    with pytest.raises(ModelLoadError, match="a dgrad model, not a forward one"):
        ModelChooser.load(dgrad_model, "forward")
    # (every candidate whose family's training rows held its config values)
    cands = registry.candidates(GROUPED, H100, "dgrad")
    seen = [c for c, new in zip(cands, model.unseen(cands)) if not new]
    ranked = model.rank(GROUPED, seen, H100)
    assert len(seen) > len(cands) // 2 and all(np.isfinite(s) for _, s in ranked)
    # A schema listing a family of another direction is refused, naming the file.
    broken = Path(shutil.copytree(dgrad_model, tmp_path / "broken"))
    schema["families"] = schema["families"] + ["implicit_gemm"]
    (broken / "schema.json").write_text(json.dumps(schema))
    with pytest.raises(ModelLoadError, match="schema.json.*another direction"):
        load_model(broken)


def test_chooser_for_loads_the_direction_model(dgrad_model, tmp_path, monkeypatch,
                                               clean_dispatcher):
    root = tmp_path / "models"
    shutil.copytree(dgrad_model, root / "h100" / "dgrad")
    shutil.copytree(MODELS_FORWARD, root / "h100", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("dgrad", "wgrad"))
    monkeypatch.setattr(model_store, "MODELS_ROOT", root)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chooser = selection.chooser_for(H100, "dgrad")
    assert chooser.identity == f"model-{load_model(dgrad_model).identity}"
    dec = decide(GROUPED, H100, direction="dgrad")
    assert dec.chooser == "model" and F.FAMILY_DIRECTION[dec.candidate.family] == "dgrad"
    # No wgrad model there: the rules, with one warning.
    with pytest.warns(RuntimeWarning, match="no trained wgrad model"):
        assert selection.chooser_for(H100, "wgrad") is selection.RULE


MODELS_FORWARD = model_store.MODELS_ROOT / "h100"


@pytest.mark.parametrize("direction", ["dgrad", "wgrad"])
def test_shipped_gradient_models_choose_gradient_kernels(direction, clean_dispatcher):
    path = model_store.MODELS_ROOT / "h100" / direction
    model = load_model(path)
    assert model.direction == direction
    meta = json.loads((path / "meta.json").read_text())
    assert meta["data"]["files"] and all(direction in f for f in meta["data"]["files"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chooser = selection.chooser_for(H100, direction)
    assert chooser.identity == f"model-{model.identity}"
    for geom in (GROUPED, DEPTHWISE, DENSE):
        ex = explain(geom, gpu="h100", direction=direction)
        assert ex.model == model.identity and ex.chooser == "model"
        assert F.FAMILY_DIRECTION[ex.candidate.family] == direction


def test_validate_refuses_a_model_of_another_direction(dgrad_model, tmp_path):
    from convdispatch.validation.report import build_report

    fwd = tmp_path / "forward.csv"
    synthetic_sweep(n_problems=3, seed=2).to_csv(fwd, index=False)
    with pytest.raises(ValueError, match="a dgrad model but the oracle CSVs hold forward rows"):
        build_report([fwd], dgrad_model, tmp_path / "report")
    assert not (tmp_path / "report").exists()
