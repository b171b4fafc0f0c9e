"""Train the kernel-choice model from sweep CSVs and write a model directory.

Methods compared (grouped CV by problem, never by row):

- ``lgbm_regression``: LightGBM L2 regression on ln(latency_us).
- ``lgbm_regression_rel``: LightGBM on ln(latency / the problem's best): only
  the order inside a problem matters, so the per-problem scale is removed.
- ``lgbm_lambdarank``: LightGBM LambdaRank, one query per problem, relevance
  grade floor(30 * best / latency) with gain 2^(grade / 3) - 1 (it doubles every
  3 grades, i.e. every 10% of efficiency), so the loss is dominated by getting
  the near-best candidates on top rather than by the order of slow ones.
- ``sklearn_hgb``: scikit-learn HistGradientBoostingRegressor on ln(latency):
  a reference only; it cannot be shipped (no pickles, no sklearn at runtime).

The shipped method is the shippable one with the best out-of-fold efficiency
(geomean of best / chosen latency). A LambdaRank ranker may ship with a guard
(heuristics/guard.py: ``lgbm_regression_rel`` vetoing far slower picks among its top
candidates) when a guard threshold beats no guard out of fold. Holdout sets are left
out of CV and of the shipped model and are scored once at the end.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone

import numpy as np

from ..kernels.base import Config
from .dataset import Dataset, direction_of, load_dataset
from .features import FAMILY_DIRECTION, FEATURE_NAMES, SCHEMA_VERSION
from .guard import GUARD_METHOD, THRESHOLDS, GuardParams, guarded_scores
from .metrics import (
    cudnn_per_problem,
    evaluate,
    order_scores,
    problem_best,
    random_choice_metrics,
    single_best_order,
)

N_GRADES = 31  # ranker relevance 0..30


def label_gain(doubling: float) -> list[float]:
    """LambdaRank gain of each relevance grade: 2^(grade / doubling) - 1, or the grade
    itself (linear) when ``doubling`` is 0."""
    if doubling == 0:
        return [float(g) for g in range(N_GRADES)]
    return [2.0 ** (g / doubling) - 1.0 for g in range(N_GRADES)]


@dataclass(frozen=True)
class HyperParams:
    """Shared by every method; max_depth bounds the cost of a cold decision."""

    n_estimators: int = 600
    learning_rate: float = 0.08
    num_leaves: int = 31
    max_depth: int = 8
    min_data_in_leaf: int = 20
    feature_fraction: float = 0.9
    bagging_fraction: float = 0.8
    lambda_l2: float = 1.0
    seed: int = 0
    num_threads: int = 2
    gain_doubling: float = 3.0  # LambdaRank gain doubles every this many grades; 0: linear

    def check(self) -> None:
        if self.n_estimators < 1 or self.num_leaves < 2 or self.min_data_in_leaf < 1:
            raise ValueError(f"invalid hyperparameters {self}")
        if not 0 < self.learning_rate <= 1 or self.num_threads < 1:
            raise ValueError(f"invalid hyperparameters {self}")
        if not (0 < self.feature_fraction <= 1 and 0 < self.bagging_fraction <= 1):
            raise ValueError(f"fractions must be in (0, 1]: {self}")
        if not (self.gain_doubling == 0 or self.gain_doubling >= 1):
            raise ValueError(f"gain_doubling must be 0 (linear) or >= 1: {self}")


@dataclass(frozen=True)
class MethodInfo:
    shippable: bool
    negate: bool  # scores = -prediction (higher prediction = better)
    transform: str  # how model_store turns a raw prediction into the reported score
    unit: str


METHODS: dict[str, MethodInfo] = {
    "lgbm_regression": MethodInfo(True, False, "exp", "estimated us"),
    "lgbm_regression_rel": MethodInfo(True, False, "exp", "estimated slowdown vs the best (x)"),
    "lgbm_lambdarank": MethodInfo(True, True, "negate", "negated ranker score"),
    "sklearn_hgb": MethodInfo(False, False, "exp", "estimated us"),
}


class Fitted:
    """A fitted method: ``scores(X)`` is lower-is-better; ``booster`` for LightGBM ones."""

    def __init__(self, method: str, model, booster=None) -> None:
        self.method, self.model, self.booster = method, model, booster

    def scores(self, X: np.ndarray, threads: int = 1) -> np.ndarray:
        """Scores of ``X`` with ``threads`` LightGBM threads (sklearn: one, as in fit)."""
        if self.booster is not None:
            pred = self.booster.predict(X, num_threads=threads)
        else:
            from threadpoolctl import threadpool_limits

            with threadpool_limits(1):
                pred = self.model.predict(X)
        pred = np.asarray(pred, dtype=np.float64)
        return -pred if METHODS[self.method].negate else pred


def _lgb_params(hp: HyperParams, objective: str) -> dict:
    params = dict(
        objective=objective, learning_rate=hp.learning_rate, num_leaves=hp.num_leaves,
        max_depth=hp.max_depth, min_data_in_leaf=hp.min_data_in_leaf,
        feature_fraction=hp.feature_fraction, bagging_fraction=hp.bagging_fraction,
        bagging_freq=1 if hp.bagging_fraction < 1 else 0, lambda_l2=hp.lambda_l2,
        seed=hp.seed, deterministic=True, force_col_wise=True, num_threads=hp.num_threads,
        verbosity=-1,
    )
    if objective == "lambdarank":
        params.update(label_gain=label_gain(hp.gain_doubling),
                      lambdarank_truncation_level=N_GRADES)
    return params


def targets(ds: Dataset) -> dict[str, np.ndarray]:
    """Per-row targets on ok rows: ln latency, ln(latency / best), relevance grade."""
    best = problem_best(ds.problem, ds.latency, ds.ok)
    ratio = best / ds.latency
    return {"log": np.log(ds.latency), "rel": np.log(ds.latency / best),
            "grade": np.clip(np.floor((N_GRADES - 1) * ratio + 1e-9), 0, N_GRADES - 1)}


def fit_method(method: str, ds: Dataset, hp: HyperParams) -> Fitted:
    """Fit ``method`` on the ok rows of ``ds`` (rows of a problem are contiguous)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; known: {list(METHODS)}")
    hp.check()
    rows = np.flatnonzero(ds.ok)
    if len(rows) == 0:
        raise ValueError("no ok rows to train on")
    X = ds.X[rows]
    tg = {k: v[rows] for k, v in targets(ds).items()}
    if method == "sklearn_hgb":
        from sklearn.ensemble import HistGradientBoostingRegressor
        from threadpoolctl import threadpool_limits

        model = HistGradientBoostingRegressor(
            learning_rate=hp.learning_rate, max_iter=hp.n_estimators,
            max_leaf_nodes=hp.num_leaves, max_depth=hp.max_depth if hp.max_depth > 0 else None,
            min_samples_leaf=hp.min_data_in_leaf, l2_regularization=hp.lambda_l2,
            early_stopping=False, random_state=hp.seed)
        # One OpenMP thread: sklearn's threads fight LightGBM's spinning ones on few cores.
        with threadpool_limits(1):
            model.fit(X, tg["log"])
        return Fitted(method, model)
    import lightgbm as lgb

    if method == "lgbm_lambdarank":
        group = np.bincount(ds.problem[rows])
        data = lgb.Dataset(X, tg["grade"].astype(np.int32), group=group[group > 0],
                           feature_name=list(FEATURE_NAMES))
        objective = "lambdarank"
    else:
        y = tg["log"] if method == "lgbm_regression" else tg["rel"]
        data = lgb.Dataset(X, y, feature_name=list(FEATURE_NAMES))
        objective = "regression"
    booster = lgb.train(_lgb_params(hp, objective), data, num_boost_round=hp.n_estimators)
    return Fitted(method, booster, booster)


def cv_splits(problem: np.ndarray, n_splits: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train rows, validation rows) per fold; a problem's rows never straddle a split."""
    from sklearn.model_selection import GroupKFold

    n_problems = len(np.unique(problem))
    if n_problems < 2:
        raise ValueError(f"grouped CV needs at least 2 problems, got {n_problems}")
    k = min(n_splits, n_problems)
    if k < 2:
        raise ValueError(f"folds must be >= 2, got {n_splits}")
    rows = np.arange(len(problem))
    return [(tr, va) for tr, va in GroupKFold(n_splits=k).split(rows, groups=problem)]


def _metrics(ds: Dataset, scores: np.ndarray) -> dict:
    cudnn = cudnn_per_problem(ds.problem, ds.rows["cudnn_us"].to_numpy(dtype=np.float64),
                              ds.n_problems)
    return evaluate(ds.problem, ds.latency, ds.ok, scores, ds.cand_id, cudnn)


def _baselines(train: Dataset, test: Dataset) -> dict[str, dict]:
    order = single_best_order(train.problem, train.latency, train.ok, train.cand_id)
    return {"single_best_config": _metrics(test, order_scores(order, test.cand_id)),
            "random_choice": random_choice_metrics(test.problem, test.latency, test.ok)}


def cross_validate(ds: Dataset, methods: Sequence[str], hp: HyperParams, folds: int,
                   log: Callable[[str], None] = print,
                   oof_out: dict[str, np.ndarray] | None = None) -> dict[str, dict]:
    """Out-of-fold metrics of every method and baseline over ``ds``'s problems; the
    out-of-fold scores themselves go into ``oof_out`` when given."""
    oof = {m: np.full(len(ds.problem), np.nan) for m in (*methods, "single_best_config")}
    seconds = dict.fromkeys(methods, 0.0)
    for i, (tr, va) in enumerate(cv_splits(ds.problem, folds)):
        train, val = _take(ds, tr), _take(ds, va)
        for m in methods:
            t0 = time.perf_counter()
            oof[m][va] = fit_method(m, train, hp).scores(val.X, hp.num_threads)
            seconds[m] += time.perf_counter() - t0
        order = single_best_order(train.problem, train.latency, train.ok, train.cand_id)
        oof["single_best_config"][va] = order_scores(order, val.cand_id)
        log(f"  fold {i + 1}: {len(np.unique(train.problem))} train / "
            f"{len(np.unique(val.problem))} validation problems")
    if oof_out is not None:
        oof_out.update(oof)
    out = {m: _metrics(ds, s) for m, s in oof.items()}
    for m in methods:
        out[m]["fit_seconds"] = round(seconds[m], 2)
    out["random_choice"] = random_choice_metrics(ds.problem, ds.latency, ds.ok)
    return out


GUARDED = "+guard"  # suffix of a method's metrics with the guard applied


def config_keys_of(configs) -> list[str]:
    """The keys of the configs (their text forms, ``Config.parse``'s) training rows hold."""
    return sorted(config_values_of(configs))


def config_values_of(configs) -> dict[str, list[int]]:
    """Each key's values in the configs (their text forms) training rows hold."""
    values: dict[str, set[int]] = {}
    for text in set(configs):
        for key, value in Config.parse(text).items():
            values.setdefault(key, set()).add(value)
    return {k: sorted(v) for k, v in sorted(values.items())}


def guard_hyperparams(hp: HyperParams) -> HyperParams:
    """The guard's: a quarter of the trees at a higher rate. It scores only the top
    candidates, but every tree costs a dispatch-time walk (600 trees took a cold
    decision from 1.2 to 1.7 ms median on this CPU)."""
    return replace(hp, n_estimators=max(1, hp.n_estimators // 4),
                   learning_rate=min(1.0, 2.5 * hp.learning_rate))


def out_of_fold(ds: Dataset, method: str, hp: HyperParams, folds: int) -> np.ndarray:
    """Out-of-fold scores of one method, on the same folds as ``cross_validate``."""
    out = np.full(len(ds.problem), np.nan)
    for tr, va in cv_splits(ds.problem, folds):
        out[va] = fit_method(method, _take(ds, tr), hp).scores(ds.X[va], hp.num_threads)
    return out


def choose_guard(ds: Dataset, oof: dict[str, np.ndarray], chosen: str,
                 log: Callable[[str], None] = print) -> tuple[GuardParams | None, dict]:
    """The guard threshold (heuristics/guard.py) with the best out-of-fold geomean + P10
    efficiency for the ranker ``chosen``, or None where every threshold loses to no
    guard. A tie ships the tightest tying threshold: the guard is a safety net for
    geometries unlike the training data (a pick 16x slower than the best on the H100
    holdout), a tail that out-of-fold geomean and P10 need not show, so it vetoes as
    much as it can without losing out of fold. Returns (params,
    {threshold: metrics}). Only a LambdaRank ranker gets a guard: a regression already
    scores slowdowns itself."""
    if chosen != "lgbm_lambdarank" or GUARD_METHOD not in oof:
        return None, {}
    base = _metrics(ds, oof[chosen])
    best, best_score, tried = None, base["efficiency_geomean"] + base["efficiency_p10"], {}
    for t in sorted(THRESHOLDS):  # tightest first: it vetoes the most
        params = GuardParams(max_log_slowdown=t)
        m = _metrics(ds, guarded_scores(ds.problem, oof[chosen], oof[GUARD_METHOD], params))
        tried[str(t)] = m
        score = m["efficiency_geomean"] + m["efficiency_p10"]
        log(f"  guard max_log_slowdown={t}: geomean {m['efficiency_geomean']:.4f}, "
            f"P10 {m['efficiency_p10']:.4f}")
        if score > best_score + 1e-12 or (best is None and score >= best_score - 1e-12):
            best, best_score = params, score
    return best, tried


def _take(ds: Dataset, rows: np.ndarray) -> Dataset:
    mask = np.zeros(len(ds.problem), dtype=bool)
    mask[rows] = True
    return ds.subset(mask)


def choose_method(cv: dict[str, dict], methods: Sequence[str]) -> str:
    """The shippable method with the best out-of-fold geomean + P10 efficiency (first
    listed on ties): the tail counts as much as the average, since one badly chosen
    layer costs a network more than many near-best ones gain."""
    ship = [m for m in methods if METHODS[m].shippable]
    if not ship:
        raise ValueError(f"none of {list(methods)} can be shipped; include an lgbm_* method")

    def score(m: str) -> float:
        return cv[m].get("efficiency_geomean", 0.0) + cv[m].get("efficiency_p10", 0.0)

    return max(ship, key=lambda m: (score(m), -ship.index(m)))


def split_holdout(ds: Dataset, holdout_sets: Sequence[str]) -> tuple[Dataset, Dataset | None]:
    sets = ds.rows["set"].to_numpy()
    known = sorted(set(sets.tolist()))
    missing = [s for s in holdout_sets if s not in known]
    if missing:
        raise ValueError(f"holdout set(s) {missing} are not in the sweeps; sets: {known}")
    if not holdout_sets:
        return ds, None
    mask = np.isin(sets, list(holdout_sets))
    if mask.all():
        raise ValueError("every problem is in a holdout set: nothing left to train on")
    return ds.subset(~mask), ds.subset(mask)


def train(sweeps: Sequence[str | os.PathLike], out: str | os.PathLike,
          holdout_sets: Sequence[str] = (), methods: Sequence[str] | None = None,
          hp: HyperParams | None = None, folds: int = 5,
          log: Callable[[str], None] = print) -> dict:
    """Compare methods, ship the best into ``out`` (model.txt, schema.json, meta.json).

    Returns the meta dict written to meta.json.
    """
    hp = hp or HyperParams()
    hp.check()
    methods = list(methods or METHODS)
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method {m!r}; known: {list(METHODS)}")
    ds = load_dataset(sweeps)
    train_ds, hold_ds = split_holdout(ds, holdout_sets)
    log(f"{int(ds.ok.sum())} ok rows of {len(ds.ok)}; {train_ds.n_problems} training problems, "
        f"{hold_ds.n_problems if hold_ds else 0} holdout problems; GPU {ds.device.name}")
    oof: dict[str, np.ndarray] = {}
    cv = cross_validate(train_ds, methods, hp, folds, log, oof)
    chosen = choose_method(cv, methods)
    log(f"chosen: {chosen}")
    ghp = guard_hyperparams(hp)
    guard_oof = ({GUARD_METHOD: out_of_fold(train_ds, GUARD_METHOD, ghp, folds)}
                 if chosen == "lgbm_lambdarank" else {})
    guard, guard_cv = choose_guard(train_ds, {**oof, **guard_oof}, chosen, log)
    if guard is not None:
        cv[chosen + GUARDED] = guard_cv[str(guard.max_log_slowdown)]
    fitted = {chosen: fit_method(chosen, train_ds, hp)}
    guard_fit = fit_method(GUARD_METHOD, train_ds, ghp) if guard is not None else None
    holdout = None
    if hold_ds is not None:
        holdout = _baselines(train_ds, hold_ds)
        for m in methods:
            if m not in fitted:
                fitted[m] = fit_method(m, train_ds, hp)
            holdout[m] = _metrics(hold_ds, fitted[m].scores(hold_ds.X, hp.num_threads))
        if guard is not None:
            holdout[chosen + GUARDED] = _metrics(hold_ds, guarded_scores(
                hold_ds.problem, fitted[chosen].scores(hold_ds.X, hp.num_threads),
                guard_fit.scores(hold_ds.X, hp.num_threads), guard))
    from .model_store import write_model_dir

    shipped = chosen + GUARDED if guard is not None else chosen
    meta = _meta(ds, train_ds, hold_ds, sweeps, hp, methods, cv, holdout, chosen, shipped)
    meta["guard"] = ({"method": GUARD_METHOD, **asdict(guard), "cv_by_threshold": guard_cv,
                      "hyperparameters": asdict(ghp)}
                     if guard is not None else {"cv_by_threshold": guard_cv})
    booster = fitted[chosen].booster
    gain = booster.feature_importance("gain")
    top = np.argsort(-gain, kind="stable")[:20]
    meta["feature_importance_gain_top20"] = {FEATURE_NAMES[i]: round(float(gain[i]), 3)
                                             for i in top if gain[i] > 0}
    check_X = np.concatenate([train_ds.X[:2000]] + ([hold_ds.X[:2000]] if hold_ds else []))
    trained = sorted(set(train_ds.rows["family"][train_ds.ok].tolist()))
    guard_model = (guard_fit.booster, guard) if guard is not None else None
    configs = train_ds.rows["config"][train_ds.ok]
    families = train_ds.rows["family"][train_ds.ok]
    return write_model_dir(out, booster, chosen, ds.device, meta, check_X, trained,
                           guard=guard_model, config_values=config_values_of(configs),
                           family_config_values={f: config_values_of(configs[families == f])
                                                 for f in trained})


def _meta(ds, train_ds, hold_ds, sweeps, hp, methods, cv, holdout, chosen, shipped) -> dict:
    import lightgbm

    sets = sorted(set(ds.rows["set"].tolist()))
    return {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "schema_version": SCHEMA_VERSION,
        "direction": direction_of(ds.rows),
        "data": {
            "sha256": ds.data_sha256, "files": [str(p) for p in sweeps],
            "rows": int(len(ds.ok)), "ok_rows": int(ds.ok.sum()),
            "problems": ds.n_problems, "train_problems": train_ds.n_problems,
            "incomplete_problems_left_out": len(ds.incomplete),
            "holdout_problems": hold_ds.n_problems if hold_ds else 0,
            "sets": sets, "holdout_sets": sorted(set(hold_ds.rows["set"])) if hold_ds else [],
            "gpus": ds.gpus, "families": sorted(set(ds.rows["family"].tolist())),
        },
        "hyperparameters": asdict(hp),
        "methods": {m: asdict(METHODS[m]) for m in methods},
        "metrics": {"cv": cv[shipped], "holdout": holdout[shipped] if holdout else None},
        "cv": cv,
        "holdout": holdout,
        "chosen_method": chosen,
        "shipped": shipped,
        "lightgbm_version": lightgbm.__version__,
        "families_known": list(FAMILY_DIRECTION),
        "n_features": len(FEATURE_NAMES),
    }
