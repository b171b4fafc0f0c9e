"""The guard (heuristics/guard.py): vetoes among the ranker's top candidates, the same at
dispatch and in reports, chosen by cross-validation, stored and verified with the model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from convdispatch.dispatcher import registry
from convdispatch.heuristics import train as T
from convdispatch.heuristics.dataset import load_dataset
from convdispatch.heuristics.features import FEATURE_NAMES, N_FEATURES, feature_matrix
from convdispatch.heuristics.guard import GuardParams, demote, guarded_scores, vetoed_in_top
from convdispatch.heuristics.model_store import ModelLoadError, load_model, write_model_dir
from convdispatch.heuristics.synthetic import synthetic_sweep
from convdispatch.heuristics.tree_model import sha256_file
from convdispatch.kernels.device import KNOWN
from convdispatch.kernels.geometry import ConvGeometry

lgb = pytest.importorskip("lightgbm")

H100 = KNOWN["h100"]
GEOM = ConvGeometry(n=8, c=64, k=128, h=28, w=28, r=3, s=3, pad=(0, 1, 1))
SLOW = "implicit_gemm"  # the family the test guard calls slow
PARAMS = GuardParams(top_k=5, max_log_slowdown=0.7)
# The test model ranks every SLOW candidate first, so its guard must look past them.
WIDE = GuardParams(top_k=1000, max_log_slowdown=0.7)


def test_demote_moves_vetoed_rows_last_keeping_their_order():
    s = np.array([0.3, -1.0, 2.0, 0.1, np.inf])
    out = demote(s, np.array([False, True, False, True, False]))
    order = np.argsort(out, kind="stable").tolist()
    assert order[:2] == [0, 2] and order[2:4] == [1, 3] and order[-1] == 4
    assert (demote(s, np.zeros(5, bool)) == s).all()


def test_vetoed_in_top_by_threshold():
    assert vetoed_in_top(np.array([0.1, 0.0, 0.75, 0.69]), PARAMS).tolist() == \
        [False, False, True, False]


def test_guarded_scores_vetoes_only_inside_each_problems_top_k():
    problem = np.repeat([0, 1], 7)
    scores = np.tile(np.arange(7.0), 2)  # row order is rank order in both problems
    guard = np.zeros(14)
    guard[0] = 3.0  # problem 0: its first pick is predicted 20x slower
    guard[7 + 6] = 9.0  # problem 1: a slow row outside the top 5 is not looked at
    guard[7 + 5] = -9.0  # nor does a fast one there make the top ones look slow
    out = guarded_scores(problem, scores, guard, PARAMS)
    first = [int(np.argmin(out[problem == p])) for p in (0, 1)]
    assert first == [1, 0]
    assert out[0] > out[1:7].max(), "the vetoed row goes last"
    assert (out[7:] == scores[7:]).all()


# -- a model directory with a guard -----------------------------------------------------

def _booster(target_of_X) -> lgb.Booster:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, N_FEATURES)).astype(np.float32)
    X[:, FEATURE_NAMES.index(f"fam_{SLOW}")] = rng.integers(0, 2, 400)
    return lgb.train(dict(objective="regression", verbosity=-1, num_leaves=4, num_threads=1,
                          min_data_in_leaf=5), lgb.Dataset(X, target_of_X(X),
                                                           feature_name=list(FEATURE_NAMES)),
                     num_boost_round=20), X


@pytest.fixture(scope="module")
def guarded(tmp_path_factory) -> Path:
    """A model that ranks SLOW first, and a guard that predicts it 20x slower."""
    col = FEATURE_NAMES.index(f"fam_{SLOW}")
    ranker, X = _booster(lambda X: -5.0 * X[:, col])  # lower score = ranked first
    guard, _ = _booster(lambda X: 3.0 * X[:, col])
    d = tmp_path_factory.mktemp("guarded") / "h100"
    write_model_dir(d, ranker, "lgbm_regression_rel", H100, {}, X, guard=(guard, WIDE))
    return d


@pytest.fixture
def copy(guarded, tmp_path) -> Path:
    return Path(shutil.copytree(guarded, tmp_path / "h100"))


def test_rank_puts_the_vetoed_first_pick_last(guarded):
    m = load_model(guarded)
    cands = registry.candidates(GEOM, H100)
    assert any(c.family == SLOW for c in cands) and any(c.family != SLOW for c in cands)
    plain = np.argsort(m.predict(feature_matrix(GEOM, cands, H100)), kind="stable")
    assert cands[plain[0]].family == SLOW, "without the guard the ranker picks SLOW"
    ranked = m.rank(GEOM, cands, H100)
    assert ranked[0][0].family != SLOW
    vetoed = {c.id for c in cands if c.family == SLOW}
    assert {c.id for c, _ in ranked[-len(vetoed):]} == vetoed


def test_row_scores_make_the_same_choice_as_rank(guarded):
    m = load_model(guarded)
    cands = registry.candidates(GEOM, H100)
    X = feature_matrix(GEOM, cands, H100)
    rows = m.row_scores(X, np.zeros(len(cands), dtype=int))
    best = {c.id for c, r in zip(cands, rows) if r == rows.min()}  # ties: rank goes by id
    assert m.rank(GEOM, cands, H100)[0][0].id == min(best)
    slow = np.array([c.family == SLOW for c in cands])
    assert rows[slow].min() > rows[~slow].max(), "vetoed rows last, as in rank"


def test_identity_covers_the_guard(guarded, copy):
    m = load_model(guarded)
    assert m.guard is not None and m.guard_params == WIDE
    assert m.identity != m.sha256[:12]
    assert json.loads((guarded / "meta.json").read_text())["identity"] == m.identity
    schema = json.loads((copy / "schema.json").read_text())
    schema["guard"]["max_log_slowdown"] = 1.0
    (copy / "schema.json").write_text(json.dumps(schema))
    (copy / "meta.json").unlink()
    assert load_model(copy).identity != m.identity


def _edit_guard(d: Path, **changes) -> None:
    schema = json.loads((d / "schema.json").read_text())
    schema["guard"].update(changes)
    (d / "schema.json").write_text(json.dumps(schema))


@pytest.mark.parametrize("case, file, words", [
    ("missing", "guard.txt", "guard model file not found"),
    ("truncated", "guard.txt", "does not match"),
    ("bad_top_k", "schema.json", "top_k"),
    ("bad_threshold", "schema.json", "max_log_slowdown"),
    ("other_method", "schema.json", "method"),
])
def test_broken_guard_is_refused_naming_the_file(copy, case, file, words):
    if case == "missing":
        (copy / "guard.txt").unlink()
    elif case == "truncated":
        text = (copy / "guard.txt").read_text()
        (copy / "guard.txt").write_text(text[: len(text) // 2])
    elif case == "bad_top_k":
        _edit_guard(copy, top_k=1)
    elif case == "bad_threshold":
        _edit_guard(copy, max_log_slowdown=-0.5)
    else:
        _edit_guard(copy, method="lgbm_lambdarank")
    with pytest.raises(ModelLoadError) as err:
        load_model(copy)
    assert str(err.value).startswith(str(copy / file) + ":"), str(err.value)
    assert words in str(err.value)


def test_rewriting_without_a_guard_removes_the_old_guard_file(guarded, tmp_path):
    d = Path(shutil.copytree(guarded, tmp_path / "m"))
    booster = lgb.Booster(model_file=str(d / "model.txt"))
    X = np.zeros((2, N_FEATURES), np.float32)
    write_model_dir(d, booster, "lgbm_regression_rel", H100, {}, X)
    assert not (d / "guard.txt").exists()
    assert load_model(d).guard is None
    assert load_model(d).identity == sha256_file(d / "model.txt")[:12]


# -- choosing the guard in training -----------------------------------------------------

@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep")
    synthetic_sweep(n_problems=12, seed=3, fail_rate=0.0).to_csv(d / "s.csv", index=False)
    return load_dataset([d / "s.csv"])


def test_choose_guard_takes_a_threshold_unless_it_hurts(dataset):
    ds = dataset
    slowdown = np.log(ds.latency / T.problem_best(ds.problem, ds.latency, ds.ok))
    # A ranker that is right except that it puts each problem's slowest row first.
    worst = slowdown == np.array([slowdown[ds.problem == p].max() for p in ds.problem])
    rank = np.where(worst, -1.0, slowdown)
    params, tried = T.choose_guard(ds, {"lgbm_lambdarank": rank,
                                        "lgbm_regression_rel": slowdown},
                                   "lgbm_lambdarank", log=lambda _m: None)
    assert params is not None and set(tried) == {str(t) for t in T.THRESHOLDS}
    assert tried[str(params.max_log_slowdown)]["efficiency_geomean"] > \
        T._metrics(ds, rank)["efficiency_geomean"]
    # An uninformative guard (every row alike) vetoes nothing: it ties with no guard, and
    # a tie ships the tightest threshold.
    flat = {"lgbm_lambdarank": rank, "lgbm_regression_rel": np.zeros_like(rank)}
    params, tried = T.choose_guard(ds, flat, "lgbm_lambdarank", log=lambda _m: None)
    assert params.max_log_slowdown == min(T.THRESHOLDS)
    assert tried[str(params.max_log_slowdown)] == T._metrics(ds, rank)
    # A guard that predicts the best rows slowest vetoes a right ranker's picks: none.
    wrong = {"lgbm_lambdarank": slowdown, "lgbm_regression_rel": -10 * slowdown}
    assert T.choose_guard(ds, wrong, "lgbm_lambdarank", log=lambda _m: None)[0] is None
    # A regression ranker gets none.
    assert T.choose_guard(ds, {"lgbm_regression": rank, "lgbm_regression_rel": slowdown},
                          "lgbm_regression", log=lambda _m: None) == (None, {})


def test_explain_names_what_the_guard_moved_back(guarded):
    from convdispatch.dispatcher.model_chooser import ModelChooser

    chooser = ModelChooser.load(guarded)
    cands = registry.candidates(GEOM, H100)
    decision = chooser.choose(GEOM, cands, H100)
    assert decision.candidate.family != SLOW
    assert "its guard moved" in decision.reason and f"{SLOW}:" in decision.reason
    ranked, vetoed = chooser.model.rank_with_vetoes(GEOM, cands, H100)
    assert ranked == chooser.model.rank(GEOM, cands, H100)
    assert vetoed and all(c.family == SLOW for c in vetoed)


def test_train_ships_the_guard_it_chooses(tmp_path, monkeypatch):
    sweep = tmp_path / "s.csv"
    synthetic_sweep(n_problems=14, seed=4, fail_rate=0.0).to_csv(sweep, index=False)
    sets = sorted(set(synthetic_sweep(n_problems=14, seed=4)["set"]))
    chosen = GuardParams(max_log_slowdown=0.5)
    seen = {}

    def fake_choose(ds, oof, method, log=print):
        seen.update(oof)
        return chosen, {"0.5": {"efficiency_geomean": 1.0}}

    monkeypatch.setattr(T, "choose_guard", fake_choose)
    hp = T.HyperParams(n_estimators=8, num_leaves=7, min_data_in_leaf=3, num_threads=1)
    meta = T.train([sweep], tmp_path / "m", holdout_sets=sets[:1],
                   methods=["lgbm_lambdarank", "lgbm_regression_rel"], hp=hp, folds=2,
                   log=lambda _m: None)
    # choose_guard sees out-of-fold scores of the ranker and of the guard method.
    assert seen["lgbm_regression_rel"].shape == seen["lgbm_lambdarank"].shape
    # (Which ranker CV picks on this tiny synthetic set is not the point here.)
    assert meta["chosen_method"] in ("lgbm_lambdarank", "lgbm_regression_rel")
    assert meta["shipped"] == f"{meta['chosen_method']}+guard"
    assert meta["guard"]["max_log_slowdown"] == 0.5
    assert meta["guard"]["hyperparameters"]["n_estimators"] == 2
    assert meta["shipped"] in meta["holdout"]
    m = load_model(tmp_path / "m")
    assert m.guard is not None and m.guard_params == chosen and m.guard.n_trees <= 2
    assert meta["identity"] == m.identity != m.sha256[:12]
