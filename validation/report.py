"""Offline validation: the model's, the rules' and the single best config's choices
against the oracle (every candidate measured) of sweep CSVs.

What each chooser picks, per problem: it ranks every row (candidate) the CSV
holds for the problem, and its choice is the best-ranked row whose status is
ok. So choosers pick among the candidates the sweep could run, as the oracle
does; a first-ranked candidate that failed is counted in ``picked_failed_rate``.
Ties go to the smaller candidate id, as at dispatch time (heuristics/metrics.py).

- model: ``LoadedModel.predict`` on the same features as at dispatch
  (``build_dataset`` -> ``feature_matrix``, device from the CSV's gpu column).
- rule: ``RuleChooser`` (dispatcher/choosers.py) ranking the problem's candidates.
- single_best: candidates ordered by mean log-efficiency
  (``heuristics.metrics.single_best_order``), either leave-one-problem-out
  (default: a problem's own rows never count toward its order) or from the
  model's training sweeps only (meta.json ``data.files`` minus holdout sets).

Efficiency = oracle best latency / chosen latency (1.0 = the fastest measured).
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..dispatcher.choosers import RuleChooser
from ..heuristics.dataset import Dataset, build_dataset, data_hash, direction_of, read_sweeps
from ..heuristics.metrics import (
    cudnn_per_problem,
    order_scores,
    per_problem_efficiency,
    single_best_order,
    summarize,
)
from ..heuristics.model_store import LoadedModel, load_model
from ..kernels.base import Candidate
from ..kernels.geometry import ConvGeometry
from .sweep_meta import read_sidecar, sidecar_path

CHOOSERS = ("model", "rule", "single_best")
TOPK = (1, 3, 5)
SINGLE_BEST_MODES = ("lopo", "train")
GROUPS = (("split", "model data split"), ("set", "network / set"),
          ("winner_family", "family of the oracle winner"), ("dtype", "dtype"),
          ("dims", "2D / 3D"))
N_WORST = 20
REPO_ROOT = Path(__file__).resolve().parent.parent


# -- inputs ---------------------------------------------------------------------------

@dataclass
class Oracle:
    """Checked rows of the oracle CSVs with their features, and where they came from."""

    ds: Dataset
    paths: list[Path]
    sidecars: list[dict]
    dropped_problems: list[str] = field(default_factory=list)  # no ok row at all


def parse_filter(text: str | Sequence[str] | None) -> list[str]:
    """'a,b*' or ['a', 'b*'] -> patterns; None or empty -> []."""
    if text is None:
        return []
    parts = text.split(",") if isinstance(text, str) else list(text)
    return [p.strip() for p in parts if p and p.strip()]


def matches(problem_id: str, set_name: str, patterns: Sequence[str]) -> bool:
    """Whether the problem id or its set matches one of the fnmatch ``patterns``."""
    return any(fnmatch.fnmatchcase(problem_id, p) or fnmatch.fnmatchcase(set_name, p)
               for p in patterns)


def select_problems(df: pd.DataFrame, patterns: Sequence[str]) -> pd.DataFrame:
    """Rows whose problem_id or set matches one of the fnmatch ``patterns`` (all if none)."""
    if not patterns:
        return df
    keep = np.array([matches(pid, set_name, patterns)
                     for pid, set_name in zip(df["problem_id"], df["set"])], dtype=bool)
    if not keep.any():
        raise ValueError(f"--problems-filter {','.join(patterns)!r} matches no problem id or "
                         f"set; sets in the CSVs: {sorted(df['set'].unique().tolist())}")
    return df[keep].reset_index(drop=True)


def sidecar_info(csv: Path) -> dict:
    """GPU, software and harness of a sweep CSV from its sidecar (a note when absent)."""
    path = sidecar_path(csv)
    out: dict = {"csv": str(csv), "sidecar": str(path)}
    try:
        meta = read_sidecar(path)
    except FileNotFoundError:
        return {**out, "sidecar": None, "note": f"no sidecar {path.name}"}
    except ValueError as e:
        return {**out, "note": f"unreadable sidecar: {e}"}
    sw, gpu = meta.get("software") or {}, meta.get("gpu") or {}
    runs = meta.get("runs") or [{}]
    return {**out, "gpu": gpu.get("name"), "driver": gpu.get("driver"),
            "torch": sw.get("torch"), "triton": sw.get("triton"), "cuda": sw.get("cuda"),
            "python": sw.get("python"), "timing": (meta.get("harness") or {}).get("timing"),
            "last_run_end": runs[-1].get("end")}


def load_oracle(paths: Sequence[str | os.PathLike], problems_filter=None) -> Oracle:
    """Read, check and featurise oracle CSVs; problems with no ok row are dropped."""
    if not paths:
        raise ValueError("no oracle CSV given (--oracle-csv FILE [FILE ...])")
    paths = [Path(p) for p in paths]
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(f"oracle CSV {p} not found")
    df = select_problems(read_sweeps(paths), parse_filter(problems_filter))
    has_ok = df.groupby("problem_id")["ok"].transform("max") == 1
    dropped = sorted(df.loc[~has_ok, "problem_id"].unique().tolist())
    if not has_ok.any():
        raise ValueError(f"{', '.join(map(str, paths))}: no problem has an ok row; "
                         "nothing to validate")
    ds = build_dataset(df[has_ok].reset_index(drop=True), data_hash(paths))
    return Oracle(ds, paths, [sidecar_info(p) for p in paths], dropped)


def read_model_meta(model_dir: str | os.PathLike) -> dict:
    """meta.json of a model directory ({} when absent or unreadable: it is provenance only)."""
    try:
        meta = json.loads((Path(model_dir) / "meta.json").read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


# -- chooser scores (lower = preferred), one per row of ds ------------------------------

def model_scores(model: LoadedModel, ds: Dataset) -> np.ndarray:
    return model.row_scores(ds.X, ds.problem)


def _problem_slices(ds: Dataset) -> list[np.ndarray]:
    return list(pd.Series(np.arange(len(ds.problem))).groupby(ds.problem).indices.values())


def _geometry(ds: Dataset, row: int) -> ConvGeometry:
    return ConvGeometry.from_row(ds.rows.iloc[row])


def rule_scores(ds: Dataset) -> np.ndarray:
    """Each row's position in RuleChooser's ranking of its problem's candidates."""
    chooser = RuleChooser()
    out = np.empty(len(ds.problem))
    for idx in _problem_slices(ds):
        cands = [Candidate.parse(c) for c in ds.cand_id[idx]]
        ranked = chooser.choose(_geometry(ds, idx[0]), cands, ds.device).ranked
        pos = {c.id: i for i, (c, _) in enumerate(ranked)}
        out[idx] = [pos[c] for c in ds.cand_id[idx]]
    return out


def lopo_single_best_scores(ds: Dataset) -> np.ndarray:
    """single_best_order's ranking with each problem's own rows left out.

    Per candidate: mean log-efficiency and count over the other problems
    (sums minus the problem's own term, rounded to 12 digits so equal means stay
    equal). Order: known before unknown, mean desc, count desc, id asc.
    """
    best = pd.Series(np.where(ds.ok, ds.latency, np.inf)).groupby(ds.problem).transform("min")
    le = np.where(ds.ok, np.log(best.to_numpy() / np.where(ds.ok, ds.latency, 1.0)), 0.0)
    ids, codes = np.unique(ds.cand_id.astype(str), return_inverse=True)
    total = np.bincount(codes, weights=le, minlength=len(ids))
    count = np.bincount(codes, weights=ds.ok.astype(float), minlength=len(ids))
    n_ex = count[codes] - ds.ok
    mean_ex = np.round(np.where(n_ex > 0, (total[codes] - le) / np.maximum(n_ex, 1), 0.0), 12)
    order = np.lexsort((codes, -n_ex, -mean_ex, n_ex == 0))
    scores = np.empty(len(order))
    scores[order] = np.arange(len(order), dtype=float)
    return scores


def _find_file(name: str, model_dir: Path) -> Path | None:
    p = Path(name)
    for cand in ([p] if p.is_absolute() else [p, model_dir / p, REPO_ROOT / p]):
        if cand.is_file():
            return cand
    return None


def train_single_best_scores(ds: Dataset, model_dir: Path, meta: dict) -> np.ndarray:
    """Order from the model's training sweeps (meta.json data.files, holdout sets removed)."""
    data = meta.get("data") or {}
    files = data.get("files") or []
    if not files:
        raise ValueError(f"{model_dir / 'meta.json'} lists no training files (data.files); "
                         "use --single-best lopo")
    found = [(f, _find_file(f, model_dir)) for f in files]
    missing = [f for f, p in found if p is None]
    if missing:
        raise FileNotFoundError(f"training sweep(s) {missing} named in {model_dir / 'meta.json'} "
                                f"not found (tried as given, under {model_dir} and {REPO_ROOT});"
                                " use --single-best lopo")
    df = read_sweeps([p for _, p in found])
    df = df[~df["set"].isin(data.get("holdout_sets") or [])]
    if df.empty:
        raise ValueError("the model's training sweeps hold no rows outside its holdout sets")
    key = (df["gpu"] + "\x1f" + df["problem_id"]).to_numpy()
    ok = df["ok"].to_numpy() == 1
    lat = np.where(ok, df["latency_us"].to_numpy(dtype=float), np.nan)
    cand = (df["family"] + ":" + df["config"]).to_numpy()
    return order_scores(single_best_order(key, lat, ok, cand), ds.cand_id)


# -- per-problem choices and metrics ------------------------------------------------------

def rank_in_problem(ds: Dataset, scores: np.ndarray) -> np.ndarray:
    """0-based rank of each ok row among its problem's ok rows by (score, id); -1 if not ok."""
    rows = np.flatnonzero(ds.ok)
    frame = pd.DataFrame({"p": ds.problem[rows], "s": np.asarray(scores, float)[rows],
                          "c": ds.cand_id[rows].astype(str), "r": rows})
    frame = frame.sort_values(["p", "s", "c"], kind="stable")
    out = np.full(len(ds.problem), -1, dtype=np.int64)
    out[frame["r"].to_numpy()] = frame.groupby("p").cumcount().to_numpy()
    return out


def choice_table(ds: Dataset, scores: np.ndarray, cudnn: np.ndarray) -> pd.DataFrame:
    """One row per problem (indexed by problem): chosen, best and top-k latencies."""
    per = per_problem_efficiency(ds.problem, ds.latency, ds.ok, np.asarray(scores, float),
                                 ds.cand_id)
    rank = rank_in_problem(ds, scores)
    for k in TOPK:
        hit = (rank >= 0) & (rank < k)
        topk = pd.Series(ds.latency[hit]).groupby(ds.problem[hit]).min()
        per[f"top{k}_us"] = topk.reindex(per["problem"]).to_numpy()
    per["chosen"] = ds.cand_id[per["chosen_row"].to_numpy()]
    per["efficiency"] = per["best_us"] / per["chosen_us"]
    per["cudnn_us"] = cudnn[per["problem"].to_numpy()]
    return per.set_index("problem", drop=False).rename_axis(None)


def summary(per: pd.DataFrame) -> dict:
    """summarize() plus top-k rates and efficiencies for every k in TOPK."""
    cudnn = np.full(int(per["problem"].max()) + 1 if len(per) else 0, np.nan)
    cudnn[per["problem"].to_numpy()] = per["cudnn_us"].to_numpy()
    out = summarize(per.reset_index(drop=True), cudnn)
    if not len(per):
        return out
    for k in TOPK:
        out[f"top{k}"] = float((per[f"top{k}_us"] == per["best_us"]).mean())
        out[f"top{k}_efficiency_geomean"] = geomean(per["best_us"] / per[f"top{k}_us"])
    ref = per["cudnn_us"].to_numpy()
    good = np.isfinite(ref) & (ref > 0)
    if good.any():
        out["faster_than_cudnn_rate"] = float((per["chosen_us"].to_numpy()[good]
                                               < ref[good]).mean())
    return out


def oracle_summary(oracle: pd.DataFrame) -> dict:
    speed = oracle["cudnn_us"] / oracle["best_us"]
    speed = speed[np.isfinite(speed) & (speed > 0)]
    out = {"problems": int(len(oracle)), "efficiency_geomean": 1.0}
    if len(speed):
        out["vs_cudnn_geomean"] = geomean(speed)
        out["faster_than_cudnn_rate"] = float((speed > 1).mean())
    return out


def geomean(values) -> float:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    return float(np.exp(np.log(v).mean())) if len(v) else float("nan")


def split_labels(meta: dict) -> dict[str, str]:
    """set -> 'train' (in the model's training data) or 'holdout', from meta.json."""
    data = meta.get("data") or {}
    hold = set(data.get("holdout_sets") or [])
    return {s: ("holdout" if s in hold else "train") for s in data.get("sets") or []}


def problem_info(ds: Dataset, oracle: pd.DataFrame, splits: dict[str, str],
                 have_meta: bool) -> pd.DataFrame:
    """Per problem (indexed like the choice tables): id, set, dtype, dims, winner, split."""
    first = np.unique(ds.problem, return_index=True)[1]
    rows = ds.rows.iloc[first]
    info = pd.DataFrame({
        "problem": np.arange(len(first)), "problem_id": rows["problem_id"].to_numpy(),
        "set": rows["set"].to_numpy(), "dtype": rows["dtype"].to_numpy(),
        "dims": [f"{d}D" for d in rows["dims"].to_numpy()],
        "geometry": [ConvGeometry.from_row(r).describe() for _, r in rows.iterrows()],
    }).set_index("problem", drop=False).rename_axis(None)
    info = info.loc[oracle.index]
    info["winner"] = oracle["chosen"]
    info["winner_family"] = [c.partition(":")[0] for c in oracle["chosen"]]
    default = "not in model data" if have_meta else "unknown (no meta.json)"
    info["split"] = [splits.get(s, default) for s in info["set"]]
    return info


def group_metrics(info: pd.DataFrame, tables: dict[str, pd.DataFrame],
                  column: str) -> list[dict]:
    """Per value of ``info[column]``: every chooser's summary and the oracle's."""
    out = []
    for value, idx in info.groupby(column, sort=True).groups.items():
        row = {"group": str(value), "problems": int(len(idx))}
        for name, per in tables.items():
            row[name] = (oracle_summary(per.loc[idx]) if name == "oracle"
                         else summary(per.loc[idx]))
        out.append(row)
    return out


def worst_problems(info: pd.DataFrame, tables: dict[str, pd.DataFrame],
                   n: int = N_WORST) -> list[dict]:
    """The ``n`` problems with the lowest model efficiency, worst first."""
    model = tables["model"].sort_values(["efficiency", "problem"]).head(n)
    out = []
    for p, r in model.iterrows():
        out.append({
            "problem_id": info.at[p, "problem_id"], "geometry": info.at[p, "geometry"],
            "model_choice": r["chosen"], "model_us": float(r["chosen_us"]),
            "winner": info.at[p, "winner"], "winner_us": float(r["best_us"]),
            "efficiency": float(r["efficiency"]),
            "rule_efficiency": float(tables["rule"].at[p, "efficiency"]),
            "single_best_efficiency": float(tables["single_best"].at[p, "efficiency"]),
            "cudnn_us": float(r["cudnn_us"]),
        })
    return out


# -- how well the model's scores track measurements ----------------------------------------

def scatter_kind(model: LoadedModel) -> str:
    """'latency' (predicts us), 'slowdown' (predicts latency / best) or 'rank' (ranker)."""
    if model.schema["score"].get("transform") == "exp":
        return "slowdown" if "slowdown" in model.score_unit or model.method.endswith("_rel") \
            else "latency"
    return "rank"


def scatter_data(ds: Dataset, scores: np.ndarray, kind: str) -> pd.DataFrame:
    """Per ok row: measured (us, slowdown or rank 1 = fastest) and predicted score."""
    ok = ds.ok
    best = pd.Series(np.where(ok, ds.latency, np.inf)).groupby(ds.problem).transform("min")
    measured_rank = pd.Series(np.where(ok, ds.latency, np.nan)).groupby(ds.problem).rank(
        method="first")
    measured = {"latency": ds.latency, "slowdown": ds.latency / best.to_numpy(),
                "rank": measured_rank.to_numpy()}[kind]
    return pd.DataFrame({"problem": ds.problem[ok], "measured": measured[ok],
                         "predicted": np.asarray(scores, float)[ok]})


def rank_agreement(points: pd.DataFrame) -> dict:
    """Mean per-problem Spearman correlation of predicted score and measured value."""
    rhos = []
    for _, g in points.groupby("problem"):
        if len(g) < 3:
            continue
        a, b = g["predicted"].rank().to_numpy(), g["measured"].rank().to_numpy()
        if a.std() > 0 and b.std() > 0:
            rhos.append(float(np.corrcoef(a, b)[0, 1]))
    return {"spearman_mean": float(np.mean(rhos)) if rhos else None,
            "problems": len(rhos)}


# -- the whole report --------------------------------------------------------------------

def model_identity(model: LoadedModel, meta: dict) -> dict:
    data = meta.get("data") or {}
    return {"path": str(model.path), "identity": model.identity, "sha256": model.sha256,
            "method": model.method, "score_unit": model.score_unit, "trained_on": model.gpu,
            "created": meta.get("created"), "data_sha256": data.get("sha256"),
            "train_sets": sorted(set(data.get("sets") or []) - set(data.get("holdout_sets")
                                                                     or [])),
            "holdout_sets": data.get("holdout_sets") or [],
            "guard": model.schema.get("guard")}


def chooser_scores(oracle: Oracle, model: LoadedModel, model_dir: Path, meta: dict,
                   single_best: str) -> dict[str, np.ndarray]:
    ds = oracle.ds
    if single_best not in SINGLE_BEST_MODES:
        raise ValueError(f"single_best must be one of {SINGLE_BEST_MODES}, got {single_best!r}")
    sb = (lopo_single_best_scores(ds) if single_best == "lopo"
          else train_single_best_scores(ds, model_dir, meta))
    return {"model": model_scores(model, ds), "rule": rule_scores(ds), "single_best": sb}


def compute_metrics(oracle: Oracle, model: LoadedModel, meta: dict,
                    scores: dict[str, np.ndarray], single_best: str) -> tuple[dict, dict]:
    """(metrics dict for metrics.json, frames for the plots and per_problem.csv)."""
    ds = oracle.ds
    cudnn = cudnn_per_problem(ds.problem, ds.rows["cudnn_us"].to_numpy(dtype=float),
                              ds.n_problems)
    oracle_t = choice_table(ds, np.where(ds.ok, ds.latency, np.inf), cudnn)
    tables = {name: choice_table(ds, s, cudnn) for name, s in scores.items()}
    splits = split_labels(meta)
    info = problem_info(ds, oracle_t, splits, bool(meta))
    with_oracle = {**tables, "oracle": oracle_t}
    kind = scatter_kind(model)
    points = scatter_data(ds, scores["model"], kind)
    metrics = {
        "header": header(oracle, model, meta, single_best),
        "overall": {**{n: summary(t) for n, t in tables.items()},
                    "oracle": oracle_summary(oracle_t)},
        "groups": {col: group_metrics(info, with_oracle, col) for col, _ in GROUPS},
        "worst": worst_problems(info, tables),
        "model_scores": {"kind": kind, **rank_agreement(points)},
    }
    return metrics, {"tables": tables, "oracle": oracle_t, "info": info, "points": points}


def header(oracle: Oracle, model: LoadedModel, meta: dict, single_best: str) -> dict:
    ds = oracle.ds
    return {
        "oracle_csvs": [str(p) for p in oracle.paths], "data_sha256": ds.data_sha256,
        "gpus": ds.gpus, "device_key": ds.device.key, "sidecars": oracle.sidecars,
        "problems": int(ds.n_problems), "rows": int(len(ds.ok)), "ok_rows": int(ds.ok.sum()),
        "problems_without_ok_rows": oracle.dropped_problems,
        "problems_incomplete": ds.incomplete,
        "model": model_identity(model, meta), "single_best_mode": single_best,
    }


def per_problem_frame(frames: dict) -> pd.DataFrame:
    """Everything per problem in one table (written as per_problem.csv)."""
    info = frames["info"]
    out = info[["problem_id", "set", "split", "dtype", "dims", "geometry", "winner"]].copy()
    out["best_us"] = frames["oracle"]["best_us"]
    out["cudnn_us"] = frames["oracle"]["cudnn_us"]
    for name, t in frames["tables"].items():
        out[f"{name}_choice"] = t["chosen"]
        out[f"{name}_us"] = t["chosen_us"]
        out[f"{name}_efficiency"] = t["efficiency"]
    return out.reset_index(drop=True)


def build_report(oracle_csvs: Sequence[str | os.PathLike], model_dir: str | os.PathLike,
                 out_dir: str | os.PathLike, problems_filter=None,
                 single_best: str = "lopo") -> dict:
    """Write report.md, metrics.json, per_problem.csv and the PNG plots into ``out_dir``.

    Returns the metrics written to metrics.json.
    """
    from .report_md import offline_markdown
    from .report_plots import write_plots

    model_dir = Path(model_dir)
    model = load_model(model_dir)  # ModelLoadError (a ValueError) names the problem
    meta = read_model_meta(model_dir)
    oracle = load_oracle(oracle_csvs, problems_filter)
    direction = direction_of(oracle.ds.rows)
    if direction != model.direction:
        raise ValueError(f"{model_dir} is a {model.direction} model but the oracle CSVs hold "
                         f"{direction} rows: validate each direction with its own model")
    scores = chooser_scores(oracle, model, model_dir, meta, single_best)
    metrics, frames = compute_metrics(oracle, model, meta, scores, single_best)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    metrics["plots"] = write_plots(out, frames, metrics["model_scores"]["kind"])
    per_problem_frame(frames).to_csv(out / "per_problem.csv", index=False)
    (out / "metrics.json").write_text(json.dumps(jsonable(metrics), indent=2) + "\n")
    (out / "report.md").write_text(offline_markdown(metrics))
    return metrics


def jsonable(obj):
    """NaN/inf -> None, numpy scalars -> Python: strict JSON."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if np.isfinite(obj) else None
    return obj


__all__ = ["CHOOSERS", "SINGLE_BEST_MODES", "Oracle", "build_report", "choice_table",
           "compute_metrics", "jsonable", "load_oracle", "lopo_single_best_scores", "rule_scores",
           "select_problems", "summary", "train_single_best_scores"]
