"""heuristics/: features, training (`convdispatch train`), the numpy tree evaluator against
lightgbm, malformed sweeps, no lightgbm at dispatch time, and deterministic rankings."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from convdispatch import cli
from convdispatch.dispatcher import registry
from convdispatch.heuristics import features as F
from convdispatch.heuristics.dataset import build_dataset, load_dataset, read_sweeps
from convdispatch.heuristics.model_store import load_model
from convdispatch.heuristics.synthetic import synthetic_problems, synthetic_sweep
from convdispatch.heuristics.train import (
    METHODS,
    N_GRADES,
    HyperParams,
    choose_method,
    cv_splits,
    label_gain,
    train,
)
from convdispatch.heuristics.tree_model import ModelLoadError, parse_model
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.device import KNOWN
from convdispatch.kernels.geometry import ConvGeometry

lgb = pytest.importorskip("lightgbm")

H100 = KNOWN["h100"]
# One thread: OpenMP workers of two pytest-xdist processes would fight over two cores.
FAST = HyperParams(n_estimators=6, num_leaves=7, min_data_in_leaf=3, num_threads=1)
QUIET = dict(log=lambda _msg: None)


def geoms() -> list[ConvGeometry]:
    """Varied geometries: dense, strided, pointwise, grouped, depthwise, stem, 3D, fp32."""
    return [
        ConvGeometry(n=8, c=64, k=128, h=28, w=28, r=3, s=3, pad=(0, 1, 1)),
        ConvGeometry(n=1, c=256, k=512, h=14, w=14, r=3, s=3, stride=(1, 2, 2), pad=(0, 1, 1),
                     dtype="bfloat16"),
        ConvGeometry(n=32, c=512, k=128, h=7, w=7, r=1, s=1),
        ConvGeometry(n=4, c=128, k=128, g=32, h=28, w=28, r=3, s=3, pad=(0, 1, 1)),
        ConvGeometry(n=4, c=96, k=96, g=96, h=56, w=56, r=3, s=3, pad=(0, 1, 1)),
        ConvGeometry(n=2, c=3, k=64, h=224, w=224, r=7, s=7, stride=(1, 2, 2), pad=(0, 3, 3)),
        ConvGeometry(n=1, c=32, k=32, d=8, h=16, w=16, t=3, r=3, s=3, pad=(1, 1, 1), dims=3,
                     dtype="float32", layout="contiguous"),
    ]


# -- features ------------------------------------------------------------------------

def test_every_registry_family_has_feature_columns():
    assert set(f.name for f in registry.families()) <= set(F.FAMILY_NAMES)
    assert set(F.FAMILY_KIND) == set(F.FAMILY_NAMES)
    assert len(set(F.FEATURE_NAMES)) == F.N_FEATURES


@pytest.mark.parametrize("geom", geoms(), ids=lambda g: g.describe())
def test_feature_matrix_shape_values_and_row_independence(geom):
    cands = registry.candidates(geom, H100)
    assert cands
    X = F.feature_matrix(geom, cands, H100)
    assert X.shape == (len(cands), F.N_FEATURES) and X.dtype == np.float32
    assert np.isfinite(X).all()
    gcols = len(F.geometry_vector(geom, H100))
    assert (X[:, :gcols] == X[0, :gcols]).all(), "geometry columns are the same on every row"
    acols = [F.FEATURE_NAMES.index(n) for n in ("align_c", "align_k", "align_cg", "align_kg")]
    assert (X[:, acols] == F.alignment_vector(geom)).all()
    onehot = X[:, [F.FEATURE_NAMES.index(f"fam_{f}") for f in F.FAMILY_NAMES]]
    assert (onehot.sum(axis=1) == 1).all()
    # A candidate's row does not depend on which other candidates are scored with it.
    perm = np.random.default_rng(0).permutation(len(cands))
    assert np.array_equal(F.feature_matrix(geom, [cands[i] for i in perm], H100), X[perm])
    for i in (0, len(cands) - 1):
        assert np.array_equal(F.feature_matrix(geom, [cands[i]], H100)[0], X[i])


@pytest.mark.parametrize("c,k,g,want", [
    (21, 823, 1, (1, 1, 1, 1)), (64, 96, 1, (64, 32, 64, 32)), (512, 256, 1, (64, 64, 64, 64)),
    (128, 256, 32, (64, 64, 4, 8)), (96, 96, 96, (32, 32, 1, 1)), (3, 64, 1, (1, 64, 1, 64)),
])
def test_alignment_columns(c, k, g, want):
    """Largest power of two dividing C, K, C/g, K/g, capped at 64; constant over candidates."""
    geom = ConvGeometry(n=2, c=c, k=k, g=g, h=9, w=9, r=3, s=3, pad=(0, 1, 1))
    assert tuple(F.alignment_vector(geom)) == want
    X = F.feature_matrix(geom, registry.candidates(geom, H100), H100)
    for name, v in zip(("align_c", "align_k", "align_cg", "align_kg"), want):
        assert (X[:, F.FEATURE_NAMES.index(name)] == v).all()


def _programs(geom: ConvGeometry, cand: Candidate) -> int:
    """Launch grid size of each family, as its launcher computes it."""
    cdiv = lambda a, b: -(-a // b)
    c = cand.config
    if cand.family == "depthwise_span":  # BLOCK_M rows x BLOCK_N (column, channel) values
        od, oh, ow = geom.out_spatial
        return geom.n * od * cdiv(oh, c["BLOCK_M"]) * cdiv(ow * geom.k, c["BLOCK_N"])
    m = cdiv(geom.gemm_m, c["BLOCK_M"])
    if "TILE_W" in c:  # 2D pixel blocks of one image and output depth
        od, oh, ow = geom.out_spatial
        tw = c["TILE_W"]
        m = geom.n * od * cdiv(oh, c["BLOCK_M"] // tw) * cdiv(ow, tw)
    if cand.family.startswith("implicit_gemm_tma"):  # TMA boxes of one or more images
        from convdispatch.kernels.implicit_gemm_tma import box_grid

        m = box_grid(geom, c["BLOCK_M"], c["TILE_W"])[0]
    if cand.family in ("grouped_direct", "depthwise", "depthwise_rows"):
        return m * cdiv(geom.k, c["BLOCK_N"])
    if cand.family in ("grouped_packed", "grouped_rows"):
        return m * cdiv(geom.g, min(c["BLOCK_N"] // geom.kg, geom.g)) * c.get("SPLIT_K", 1)
    if cand.family == "stem":
        return m * cdiv(geom.k, c["BLOCK_N"])
    if cand.family == "grouped_flat":  # ITEMS items of whole output rows a program
        from convdispatch.kernels.flat_grid import flat_consts

        _, oh, _ = geom.out_spatial
        items = geom.n * cdiv(oh, flat_consts(geom, c["BLOCK_M"])["ROWS"])
        gpt = max(1, min(c["BLOCK_N"] // max(geom.kg, geom.cg), geom.g))
        return cdiv(items, c["ITEMS"]) * cdiv(geom.g, gpt)
    return m * cdiv(geom.kg, c["BLOCK_N"]) * geom.g * c.get("SPLIT_K", 1)


@pytest.mark.parametrize("geom", geoms(), ids=lambda g: g.describe())
def test_programs_feature_is_the_launch_grid(geom):
    cands = registry.candidates(geom, H100)
    X = F.feature_matrix(geom, cands, H100)
    got = X[:, F.FEATURE_NAMES.index("programs")]
    assert got.tolist() == [float(_programs(geom, c)) for c in cands]


def test_feature_matrix_rejects_bad_input():
    g = geoms()[0]
    cand = registry.candidates(g, H100)[0]
    with pytest.raises(TypeError, match="ConvGeometry"):
        F.feature_matrix(g.as_row(), [cand], H100)
    with pytest.raises(TypeError, match="DeviceSpec"):
        F.feature_matrix(g, [cand], "h100")
    with pytest.raises(TypeError, match="Candidate"):
        F.feature_matrix(g, [cand, "implicit_gemm:BLOCK_M=64"], H100)
    with pytest.raises(ValueError, match="unknown kernel family 'winograd'"):
        F.feature_matrix(g, [Candidate("winograd", cand.config)], H100)
    with pytest.raises(ValueError, match="lacks"):
        F.feature_matrix(g, [Candidate("implicit_gemm", Config(BLOCK_M=64, BLOCK_N=64))], H100)
    assert F.feature_matrix(g, [], H100).shape == (0, F.N_FEATURES)


def _sweep_of(problems, device=H100) -> pd.DataFrame:
    return synthetic_sweep(problems=problems, device=device, candidates=registry.candidates,
                           fail_rate=0.1)


def test_sweep_rows_equal_call_time_rows(tmp_path):
    """Training features (CSV -> dataset) equal dispatch features for the same pair."""
    problems = [(f"t/l{i}/n{g.n}/{g.dtype}", "t", f"l{i}", g) for i, g in enumerate(geoms())]
    csv = tmp_path / "sweep.csv"
    _sweep_of(problems).to_csv(csv, index=False)
    ds = load_dataset([csv])
    rows = ds.rows
    for pid, _, _, geom in problems:
        idx = np.flatnonzero(rows["problem_id"].to_numpy() == pid)
        cands = [Candidate(f, Config.parse(c))
                 for f, c in zip(rows["family"].to_numpy()[idx], rows["config"].to_numpy()[idx])]
        assert np.array_equal(ds.X[idx], F.feature_matrix(geom, cands, H100)), pid
    assert ds.n_problems == len(problems)


# -- a sweep from the real harness (fake backend) --------------------------------------

@dataclass(frozen=True)
class _P:
    id: str
    set: str
    layer: str
    geom: ConvGeometry


@pytest.fixture(scope="module")
def harness_csv(tmp_path_factory) -> tuple[Path, list[_P]]:
    from convdispatch.validation.backends import FakeBackend
    from convdispatch.validation.sweep import run_sweep

    problems = []
    for i in range(5):
        # contiguous: the families the candidate limit leaves are the same for every
        # problem (a TMA family offered to some would make the others incomplete)
        g = ConvGeometry(n=1 + i % 3, c=16 * (1 + i % 4), k=32 * (1 + i % 2), h=8 + 4 * (i % 3),
                         w=8, r=3, s=3, pad=(0, 1, 1), layout="contiguous")
        problems.append(_P(f"unit/l{i}/n{g.n}/float16", "unit", f"l{i}", g))
    out = tmp_path_factory.mktemp("harness") / "sweep.csv"
    run_sweep(problems, out, backend=FakeBackend(), jobs=1, limit_candidates=6, quiet=True,
              command=["test"])
    return out, problems


def test_train_cli_end_to_end_on_harness_sweep(harness_csv, tmp_path, capsys):
    csv, problems = harness_csv
    out = tmp_path / "model"
    rc = cli.main(["train", "--sweeps", str(csv), "--out", str(out), "--n-estimators", "5",
                   "--num-leaves", "4", "--min-data-in-leaf", "2", "--folds", "2", "--threads", "1",
                   "--quiet"])
    assert rc == 0, capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["meta.json", "model.txt", "schema.json"]
    text = (out / "model.txt").read_text()
    assert text.startswith("tree\n") and "end of trees" in text
    meta = json.loads((out / "meta.json").read_text())
    schema = json.loads((out / "schema.json").read_text())
    assert meta["data"]["sha256"] == hashlib.sha256(csv.read_bytes()).hexdigest()
    assert meta["data"]["problems"] == len(problems)
    assert meta["hyperparameters"]["n_estimators"] == 5
    assert set(meta["cv"]) == set(METHODS) | {"single_best_config", "random_choice"}
    assert meta["chosen_method"] in METHODS and METHODS[meta["chosen_method"]].shippable
    assert meta["metrics"]["cv"] == meta["cv"][meta["chosen_method"]]
    assert meta["gpu"]["key"] == "h100" == schema["gpu"]["key"]
    assert meta["model_sha256"] == schema["model_sha256"]
    assert schema["schema_version"] == F.SCHEMA_VERSION
    assert schema["feature_names"] == list(F.FEATURE_NAMES)
    assert meta["tree_model_max_abs_diff"] <= 1e-9
    model = load_model(out)
    assert model.identity in capsys.readouterr().out
    # Harness rows and call-time features agree; the model ranks every candidate.
    ds = load_dataset([csv])
    for p in problems:
        idx = np.flatnonzero(ds.rows["problem_id"].to_numpy() == p.id)
        cands = [Candidate.parse(f"{f}:{c}") for f, c in
                 zip(ds.rows["family"].to_numpy()[idx], ds.rows["config"].to_numpy()[idx])]
        assert np.array_equal(ds.X[idx], F.feature_matrix(p.geom, cands, H100))
        ranked = model.rank(p.geom, cands, H100)
        assert sorted(c.id for c, _ in ranked) == sorted(c.id for c in cands)


@pytest.fixture(scope="module")
def synthetic_csvs(tmp_path_factory) -> tuple[Path, Path]:
    """Two sweep files of one synthetic GPU, problems split between them."""
    d = tmp_path_factory.mktemp("syn")
    df = synthetic_sweep(n_problems=36, seed=3)
    first = df["problem_id"].isin(df["problem_id"].unique()[::2])
    a, b = d / "a.csv", d / "b.csv"
    df[first].to_csv(a, index=False)
    df[~first].to_csv(b, index=False)
    return a, b


def test_comma_separated_sweeps_holdout_and_learning(synthetic_csvs, tmp_path, capsys):
    a, b = synthetic_csvs
    out = tmp_path / "m"
    rc = cli.main(["train", "--sweeps", f"{a},{b}", "--out", str(out), "--n-estimators", "30",
                   "--min-data-in-leaf", "3", "--folds", "3", "--holdout-sets", "syn_c",
                   "--threads", "1", "--quiet"])
    assert rc == 0, capsys.readouterr().err
    meta = json.loads((out / "meta.json").read_text())
    assert meta["data"]["files"] == [str(a), str(b)]
    assert meta["data"]["holdout_sets"] == ["syn_c"]
    assert meta["data"]["train_problems"] + meta["data"]["holdout_problems"] == 36
    assert meta["holdout"] and meta["metrics"]["holdout"]
    cv = meta["cv"]
    # The synthetic latencies have structure: the model must beat a random pick clearly.
    assert cv[meta["chosen_method"]]["efficiency_geomean"] > \
        cv["random_choice"]["efficiency_geomean"] + 0.1


def test_training_is_reproducible(synthetic_csvs, tmp_path):
    a, _ = synthetic_csvs
    shas = [train([a], tmp_path / f"m{i}", methods=["lgbm_regression", "lgbm_lambdarank"],
                  hp=FAST, folds=2, **QUIET)["model_sha256"] for i in range(2)]
    assert shas[0] == shas[1]


def test_cv_splits_never_split_a_problem():
    problem = np.repeat(np.arange(7), [3, 1, 4, 2, 5, 1, 2])
    folds = cv_splits(problem, 3)
    assert len(folds) == 3
    seen = np.concatenate([va for _, va in folds])
    assert sorted(seen.tolist()) == list(range(len(problem)))
    for tr, va in folds:
        assert not set(problem[tr]) & set(problem[va])
    with pytest.raises(ValueError, match="at least 2 problems"):
        cv_splits(np.zeros(5, int), 3)


def test_choose_method_ships_only_lightgbm():
    cv = {"lgbm_regression": {"efficiency_geomean": 0.8},
          "lgbm_lambdarank": {"efficiency_geomean": 0.9},
          "sklearn_hgb": {"efficiency_geomean": 0.99}}
    assert choose_method(cv, list(cv)) == "lgbm_lambdarank"
    cv["lgbm_regression"]["efficiency_geomean"] = 0.9
    assert choose_method(cv, list(cv)) == "lgbm_regression", "ties go to the first listed"
    cv["lgbm_lambdarank"]["efficiency_p10"] = 0.8  # the tail decides between equals
    assert choose_method(cv, list(cv)) == "lgbm_lambdarank"
    with pytest.raises(ValueError, match="shipped"):
        choose_method(cv, ["sklearn_hgb"])


def test_label_gain_linear_or_exponential():
    assert label_gain(0) == list(range(N_GRADES))
    gain = label_gain(HyperParams().gain_doubling)
    assert len(gain) == N_GRADES and gain[0] == 0.0
    assert all(b > a for a, b in zip(gain, gain[1:]))
    assert gain[6] == pytest.approx(2 * gain[3] + 1), "gain + 1 doubles every 3 grades"
    for bad in (-1.0, 0.5):
        with pytest.raises(ValueError, match="gain_doubling"):
            HyperParams(gain_doubling=bad).check()


def test_train_rejects_bad_arguments(synthetic_csvs, tmp_path):
    a, _ = synthetic_csvs
    with pytest.raises(ValueError, match="unknown method 'xgb'"):
        train([a], tmp_path, methods=["xgb"], **QUIET)
    with pytest.raises(ValueError, match="hyperparameters"):
        train([a], tmp_path, hp=HyperParams(n_estimators=0), **QUIET)
    with pytest.raises(ValueError, match="holdout set"):
        train([a], tmp_path, holdout_sets=["nope"], hp=FAST, **QUIET)
    with pytest.raises(ValueError, match="no sweep CSV"):
        train([], tmp_path, **QUIET)
    assert not (tmp_path / "model.txt").exists()


# -- malformed sweeps -----------------------------------------------------------------

@pytest.fixture(scope="module")
def good_csv_text(tmp_path_factory) -> str:
    return synthetic_sweep(n_problems=4, seed=1, fail_rate=0.0).to_csv(index=False)


def _cell(text: str, row: int, column: str) -> str:
    lines = text.splitlines()
    return lines[row + 1].split(",")[lines[0].split(",").index(column)]


def _corrupt(text: str, row: int, column: str, value: str, to_row: int | None = None) -> str:
    """Set ``column`` of data rows ``row`` .. ``to_row`` (0-based, inclusive) to ``value``."""
    lines = text.splitlines()
    col = lines[0].split(",").index(column)
    for r in range(row, (row if to_row is None else to_row) + 1):
        cells = lines[r + 1].split(",")
        cells[col] = value
        lines[r + 1] = ",".join(cells)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("case,expect", [
    ("missing_column", ["missing column", "latency_us"]),
    ("text_latency", ["line 4 (data row 3)", "latency_us", "'fast'"]),
    ("negative_latency", ["line 3 (data row 2)", "latency_us", "positive"]),
    ("empty_ok_latency", ["line 2 (data row 1)", "latency_us"]),
    ("bad_config", ["line 5 (data row 4)", "'config'", "BLOCK_M=abc"]),
    ("config_lacks_block_k", ["line 3 (data row 2)", "'config'", "BLOCK_K"]),
    ("unknown_family", ["line 2 (data row 1)", "'family'", "winograd"]),
    ("bad_geometry", ["line 2 (data row 1)", "invalid geometry", "float8"]),
    ("empty_file", ["empty"]),
    ("header_only", ["no data rows"]),
])
def test_malformed_sweep_names_file_row_and_column(good_csv_text, tmp_path, case, expect):
    t = good_csv_text
    if case == "missing_column":
        df = pd.read_csv(io.StringIO(t)).drop(columns="latency_us")
        t = df.to_csv(index=False)
    elif case == "text_latency":
        t = _corrupt(t, 2, "latency_us", "fast")
    elif case == "negative_latency":
        t = _corrupt(t, 1, "latency_us", "-3")
    elif case == "empty_ok_latency":
        t = _corrupt(t, 0, "latency_us", "")
    elif case == "bad_config":
        t = _corrupt(t, 3, "config", "BLOCK_M=abc")
    elif case == "config_lacks_block_k":
        cfg = _cell(t, 1, "config")
        t = _corrupt(t, 1, "config", ";".join(x for x in cfg.split(";")
                                              if not x.startswith("BLOCK_K")))
    elif case == "unknown_family":
        t = _corrupt(t, 0, "family", "winograd")
    elif case == "bad_geometry":
        first = _cell(t, 0, "problem_id")
        last = max(i for i in range(len(t.splitlines()) - 1) if _cell(t, i, "problem_id") == first)
        t = _corrupt(t, 0, "dtype", "float8", to_row=last)
    elif case == "empty_file":
        t = ""
    elif case == "header_only":
        t = t.splitlines()[0] + "\n"
    path = tmp_path / f"{case}.csv"
    path.write_text(t)
    with pytest.raises(ValueError) as err:
        read_sweeps([path])
    msg = str(err.value)
    assert str(path) in msg
    for part in expect:
        assert part in msg, msg
    # The CLI reports the same message and exit status 2, and writes nothing.
    out = tmp_path / "out"
    assert cli.main(["train", "--sweeps", str(path), "--out", str(out)]) == 2
    assert not out.exists()


def test_inconsistent_problem_geometry_and_mixed_gpus(good_csv_text, tmp_path):
    t = _corrupt(good_csv_text, 1, "h", "99")
    path = tmp_path / "geo.csv"
    path.write_text(t)
    with pytest.raises(ValueError, match="different geometry.*'h'"):
        read_sweeps([path])
    df = synthetic_sweep(n_problems=3, seed=1)
    df2 = synthetic_sweep(n_problems=3, seed=2, device=KNOWN["a100"], sets=("other",))
    with pytest.raises(ValueError, match="mix GPUs"):
        build_dataset(pd.concat([df, df2], ignore_index=True).assign(source="x"))


# -- the numpy evaluator against lightgbm ---------------------------------------------

def _data(n: int, f: int, seed: int, nan_cols=(), zero_cols=()):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f))
    X[:, 1] = rng.integers(0, 5, n)  # few distinct values: many equal thresholds
    for c in nan_cols:
        X[rng.random(n) < 0.2, c] = np.nan
    for c in zero_cols:
        X[rng.random(n) < 0.3, c] = 0.0
    y = np.sin(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 2]) + 0.3 * X[:, 1] + rng.normal(0, .1, n)
    return X, y


def _probe(f: int, seed: int) -> np.ndarray:
    """Rows with NaN, zeros, tiny values, infinities and shared (constant) columns."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, f))
    X[rng.random(X.shape) < 0.1] = np.nan
    X[rng.random(X.shape) < 0.1] = 0.0
    X[rng.random(X.shape) < 0.03] = 1e-36
    X[rng.random(X.shape) < 0.03] = -np.inf
    X[rng.random(X.shape) < 0.03] = np.inf
    X[:150, 3] = X[0, 3]  # constant column on the first half
    X[:150, 0] = np.nan
    return X


@pytest.mark.parametrize("params", [
    dict(objective="regression"),
    dict(objective="regression", zero_as_missing=True),
    dict(objective="regression", use_missing=False),
    dict(objective="regression", num_leaves=90, max_depth=-1, min_data_in_leaf=2),
    dict(objective="huber"),
    dict(boosting="rf", bagging_fraction=0.7, bagging_freq=1, objective="regression"),
], ids=["nan", "zero_missing", "no_missing", "deep", "huber", "random_forest"])
def test_tree_model_equals_lightgbm_with_missing_values(params):
    X, y = _data(800, 6, seed=1, nan_cols=(0, 2), zero_cols=(4,))
    full = dict(dict(num_leaves=15, min_data_in_leaf=5, verbosity=-1, seed=0,
                     num_threads=1), **params)
    booster = lgb.train(full, lgb.Dataset(X, y), num_boost_round=25)
    ens = parse_model(booster.model_to_string())
    for P in (_probe(6, 2), X, X[:1], _probe(6, 3)[:150]):
        np.testing.assert_allclose(ens.predict(P), booster.predict(P, num_threads=1),
                                   rtol=0, atol=1e-9)
    np.testing.assert_allclose(ens.predict(P.astype(np.float32)),
                               booster.predict(P.astype(np.float32), num_threads=1), atol=1e-9)


def test_tree_model_equals_lightgbm_on_trained_rankers(synthetic_csvs, tmp_path):
    a, b = synthetic_csvs
    for method in ("lgbm_lambdarank", "lgbm_regression_rel"):
        meta = train([a], tmp_path / method, methods=[method], hp=FAST, folds=2, **QUIET)
        model = load_model(tmp_path / method)
        booster = lgb.Booster(model_file=str(tmp_path / method / "model.txt"))
        X = load_dataset([b]).X
        np.testing.assert_allclose(model.ensemble.predict(X), booster.predict(X, num_threads=1),
                                   rtol=0, atol=1e-9)
        assert meta["chosen_method"] == method == model.method
        for geom in geoms():  # one geometry per call, as at dispatch
            Xg = F.feature_matrix(geom, registry.candidates(geom, H100), H100)
            np.testing.assert_allclose(model.ensemble.predict(Xg),
                                       booster.predict(Xg, num_threads=1), rtol=0, atol=1e-9)


def test_tree_model_refuses_what_it_cannot_evaluate():
    X, y = _data(400, 4, seed=0)
    X[:, 3] = np.random.default_rng(0).integers(0, 6, len(X))
    base = dict(verbosity=-1, num_leaves=7, min_data_in_leaf=5, num_threads=1)
    y_cat = y + 3.0 * np.isin(X[:, 3], [1, 4])
    cat = lgb.train(dict(base, objective="regression"),
                    lgb.Dataset(X, y_cat, categorical_feature=[3]), num_boost_round=5)
    with pytest.raises(ModelLoadError, match="categorical"):
        parse_model(cat.model_to_string(), "cat.txt")
    binary = lgb.train(dict(base, objective="binary"), lgb.Dataset(X, (y > 0).astype(int)),
                       num_boost_round=3)
    with pytest.raises(ModelLoadError, match="objective 'binary"):
        parse_model(binary.model_to_string(), "bin.txt")
    linear = lgb.train(dict(base, objective="regression", linear_tree=True), lgb.Dataset(X, y),
                       num_boost_round=3)
    with pytest.raises(ModelLoadError, match="linear"):
        parse_model(linear.model_to_string(), "lin.txt")
    ok = lgb.train(dict(base, objective="regression"), lgb.Dataset(X, y), num_boost_round=3)
    text = ok.model_to_string()
    with pytest.raises(ModelLoadError, match="x.txt: .*truncated"):
        parse_model(text[: text.index("end of trees") - 40], "x.txt")
    with pytest.raises(ModelLoadError, match="x.txt: the file is empty"):
        parse_model("", "x.txt")
    with pytest.raises(ModelLoadError, match="not a LightGBM text model"):
        parse_model("{}", "x.txt")
    with pytest.raises(ValueError, match="4 feature columns"):
        parse_model(text).predict(np.zeros((2, 5)))


# -- dispatch without lightgbm, determinism ---------------------------------------------

@pytest.fixture(scope="module")
def small_model(tmp_path_factory, synthetic_csvs) -> Path:
    out = tmp_path_factory.mktemp("small") / "h100"
    train([synthetic_csvs[0]], out, methods=["lgbm_regression"], hp=FAST, folds=2, **QUIET)
    return out


_RANK_SCRIPT = textwrap.dedent("""
    import json, sys

    blocked = []

    class Block:  # the GPU image has no lightgbm or scikit-learn
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("lightgbm", "sklearn"):
                blocked.append(name)
                raise ImportError(f"blocked {name}")

    sys.meta_path.insert(0, Block())
    import convdispatch
    from convdispatch.dispatcher import decide, registry
    from convdispatch.dispatcher.model_chooser import ModelChooser
    from convdispatch.heuristics.model_store import load_model
    from convdispatch.kernels.device import KNOWN
    from convdispatch.kernels.geometry import ConvGeometry

    dev = KNOWN["h100"]
    model = load_model(sys.argv[1])
    convdispatch.set_chooser(ModelChooser(model))
    out = {"ranked": [], "decided": []}
    for args in json.loads(sys.argv[2]):
        g = ConvGeometry(**args)
        ranked = model.rank(g, registry.candidates(g, dev), dev)
        out["ranked"].append([(c.id, repr(s)) for c, s in ranked])
        out["decided"].append(decide(g, dev).candidate.id)
    out["explain"] = str(convdispatch.explain(ConvGeometry(**json.loads(sys.argv[2])[0]),
                                               gpu="h100"))
    out["blocked"] = blocked
    out["loaded"] = sorted(m for m in sys.modules if m.split(".")[0] in ("lightgbm", "sklearn"))
    print(json.dumps(out))
""")


def _geom_args() -> str:
    keep = ("n", "c", "k", "g", "d", "h", "w", "t", "r", "s", "stride", "pad", "dims", "dtype",
            "layout")
    return json.dumps([{k: getattr(g, k) for k in keep} for g in geoms()])


def _rank_in_subprocess(model_dir: Path, hash_seed: str) -> dict:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed, TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-c", _RANK_SCRIPT, str(model_dir), _geom_args()],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_dispatch_needs_no_lightgbm_and_ranking_is_deterministic(small_model):
    first = _rank_in_subprocess(small_model, "1")
    assert first["blocked"] == [] and first["loaded"] == []
    model = load_model(small_model)
    assert f"model {model.identity}" in first["explain"]
    second = _rank_in_subprocess(small_model, "2")
    assert second["ranked"] == first["ranked"] and second["decided"] == first["decided"]
    here = [[(c.id, repr(s)) for c, s in model.rank(g, registry.candidates(g, H100), H100)]
            for g in geoms()]
    assert [[tuple(x) for x in r] for r in first["ranked"]] == here
    assert first["decided"] == [r[0][0] for r in here]


def test_synthetic_problems_cover_every_family():
    probs = synthetic_problems(21, seed=0)
    df = synthetic_sweep(problems=probs)
    assert set(df["family"]) == set(F.FORWARD_FAMILIES)
    assert len({p[0] for p in probs}) == len(probs)


def test_problems_missing_a_swept_family_are_left_out_of_training():
    """A family-limited sweep can reach a problem before the full sweep does: its best
    row is then not the oracle's, so training leaves the problem out and says so."""
    probs = [p for p in synthetic_problems(14, seed=4) if p[3].is_depthwise]
    df = synthetic_sweep(problems=probs, fail_rate=0.0,
                         candidates=lambda g, d: registry.candidates(g, d))
    assert len(probs) >= 2 and "depthwise_rows" in set(df["family"])
    cut = probs[0][0]
    partial = df[~((df["problem_id"] == cut) & (df["family"] != "depthwise_rows"))]
    ds = build_dataset(partial.reset_index(drop=True))
    assert ds.incomplete == [cut]
    assert cut not in set(ds.rows["problem_id"])
    assert ds.n_problems == len(probs) - 1
    assert build_dataset(df).incomplete == []


def test_span_features_count_the_tail_of_the_flattened_row():
    """depthwise_span: 144 channels x 56 columns = 8064 values a row, in 8 spans of 1024
    (1.6% padding) and no channel waste, where a 64-channel tile wastes a third."""
    geom = ConvGeometry(n=2, c=144, k=144, g=144, h=56, w=56, r=3, s=3, pad=(0, 1, 1))
    span = Candidate("depthwise_span", Config(BLOCK_M=4, BLOCK_N=1024, num_warps=4,
                                              num_stages=1))
    tile = Candidate("depthwise_rows", Config(BLOCK_M=32, TILE_W=8, BLOCK_N=64, num_warps=4,
                                              num_stages=1))
    X = F.feature_matrix(geom, [span, tile], H100)
    col = {n: X[:, F.FEATURE_NAMES.index(n)] for n in ("waste_m", "waste_n", "tiles_n")}
    assert col["waste_m"][0] == pytest.approx(8 * 1024 / 8064 - 1, rel=1e-5)
    assert col["waste_n"][0] == 0 and col["tiles_n"][0] == 1
    assert col["waste_n"][1] == pytest.approx(192 / 144 - 1, rel=1e-5)


def test_tma_twins_differ_in_the_tma_knob():
    """grouped_flat's TMA configs and their cp.async twins (the same config without TMA=1)
    read 1 and 0 in the TMA column (schema v22), so a model can score them apart."""
    geom = ConvGeometry(n=32, c=256, k=256, g=32, h=56, w=56, r=3, s=3, stride=(1, 2, 2),
                        pad=(0, 1, 1))
    cands = {c.id: c for c in registry.candidates(geom, H100) if c.family == "grouped_flat"}
    pairs = [(c, cands[c.id.replace(";TMA=1", "")]) for c in cands.values()
             if c.config.get("TMA") and c.id.replace(";TMA=1", "") in cands]
    assert len(pairs) >= 4 and all(twin.config.get("TMA") is None for _, twin in pairs)
    X = F.feature_matrix(geom, [c for pair in pairs for c in pair], H100)
    col = F.FEATURE_NAMES.index("TMA")
    assert list(X[0::2, col]) == [1.0] * len(pairs)
    assert list(X[1::2, col]) == [0.0] * len(pairs)
    others = np.delete(X, col, axis=1)
    assert np.array_equal(others[0::2, :col], others[1::2, :col])  # geometry, family, knobs
