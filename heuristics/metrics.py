"""How good a chooser is on measured problems, and the baselines a model must beat.

Efficiency of a problem = best measured latency / latency of the chosen
candidate (1.0 = always the fastest). A chooser picks the lowest score among
the problem's ok rows; equal scores go to the smallest candidate id, as at
dispatch time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _codes(cand_id: np.ndarray) -> np.ndarray:
    """Integer codes in candidate-id string order (tie breaker)."""
    return np.unique(np.asarray(cand_id, dtype=str), return_inverse=True)[1]


def _sorted_groups(problem, scores, cand_id, mask):
    rows = np.flatnonzero(mask)
    order = rows[np.lexsort((_codes(cand_id)[rows], scores[rows], problem[rows]))]
    p = problem[order]
    starts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]]) if len(p) else np.zeros(0, int)
    sizes = np.diff(np.r_[starts, len(order)])
    pos = np.arange(len(order)) - np.repeat(starts, sizes)
    return order, starts, pos


def per_problem_efficiency(problem: np.ndarray, latency: np.ndarray, ok: np.ndarray,
                           scores: np.ndarray, cand_id: np.ndarray) -> pd.DataFrame:
    """One row per problem with ok rows: best, chosen, top-5 best latencies, failed pick."""
    scores = np.asarray(scores, dtype=np.float64)
    order, starts, pos = _sorted_groups(problem, scores, cand_id, ok)
    lat = latency[order]
    best = np.minimum.reduceat(lat, starts) if len(starts) else np.zeros(0)
    top5 = np.minimum.reduceat(np.where(pos < 5, lat, np.inf), starts) if len(starts) else best
    out = pd.DataFrame({"problem": problem[order][starts], "best_us": best,
                        "chosen_us": lat[starts], "top5_us": top5,
                        "chosen_row": order[starts]})
    # The pick among all rows, failed ones included: would the model launch a failure?
    all_order, all_starts, _ = _sorted_groups(problem, scores, cand_id, np.ones_like(ok))
    first_any = pd.Series(ok[all_order][all_starts], index=problem[all_order][all_starts])
    out["picked_failed"] = ~first_any.reindex(out["problem"]).to_numpy(dtype=bool)
    return out


def summarize(per: pd.DataFrame, cudnn_us: np.ndarray | None = None) -> dict:
    """Aggregate metrics of ``per_problem_efficiency``'s table."""
    if per.empty:
        return {"problems": 0}
    eff = per["best_us"] / per["chosen_us"]
    out = {
        "problems": int(len(per)),
        "efficiency_geomean": float(np.exp(np.log(eff).mean())),
        "efficiency_p10": float(np.quantile(eff, 0.10)),
        "efficiency_min": float(eff.min()),
        "top1": float((per["chosen_us"] == per["best_us"]).mean()),
        "top5": float((per["top5_us"] == per["best_us"]).mean()),
        "top5_efficiency_geomean": float(np.exp(np.log(per["best_us"] / per["top5_us"]).mean())),
        "picked_failed_rate": float(per["picked_failed"].mean()),
    }
    if cudnn_us is not None:
        ref = cudnn_us[per["problem"].to_numpy()]
        good = np.isfinite(ref) & (ref > 0)
        if good.any():
            speed = ref[good] / per["chosen_us"].to_numpy()[good]
            out["vs_cudnn_geomean"] = float(np.exp(np.log(speed).mean()))
    return out


def evaluate(problem, latency, ok, scores, cand_id, cudnn_us=None) -> dict:
    """Metrics of a chooser whose per-row scores are ``scores`` (lower = chosen)."""
    return summarize(per_problem_efficiency(problem, latency, ok, scores, cand_id), cudnn_us)


def problem_best(problem: np.ndarray, latency: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Per-row best ok latency of the row's problem (NaN where a problem has none)."""
    lat = np.where(ok, latency, np.inf)
    best = pd.Series(lat).groupby(problem).transform("min").to_numpy()
    return np.where(np.isfinite(best), best, np.nan)


def single_best_order(problem, latency, ok, cand_id) -> list[str]:
    """Candidate ids by mean log-efficiency over the problems where they ran ok.

    Used as a fallback list: a problem takes the first id in the order that it
    can run, so a candidate that only fits some problems is judged on those.
    Ties: more problems covered first, then candidate id.
    """
    eff = problem_best(problem, latency, ok) / latency
    frame = pd.DataFrame({"id": np.asarray(cand_id, dtype=str)[ok], "le": np.log(eff[ok])})
    stats = frame.groupby("id")["le"].agg(["mean", "count"]).reset_index()
    stats = stats.sort_values(["mean", "count", "id"], ascending=[False, False, True])
    return stats["id"].tolist()


def order_scores(order: list[str], cand_id: np.ndarray) -> np.ndarray:
    """Scores that make a chooser follow ``order`` (unknown ids last)."""
    pos = {cid: i for i, cid in enumerate(order)}
    return np.array([pos.get(c, len(order)) for c in cand_id], dtype=np.float64)


def random_choice_metrics(problem, latency, ok) -> dict:
    """Expected efficiency of picking uniformly among a problem's ok rows."""
    eff = problem_best(problem, latency, ok) / latency
    mean = pd.Series(eff[ok]).groupby(problem[ok]).mean()
    if mean.empty:
        return {"problems": 0}
    return {"problems": int(len(mean)),
            "efficiency_geomean": float(np.exp(np.log(mean).mean())),
            "efficiency_p10": float(np.quantile(mean, 0.10))}


def cudnn_per_problem(problem: np.ndarray, cudnn: np.ndarray, n_problems: int) -> np.ndarray:
    """Median cuDNN latency of each problem (NaN when never measured)."""
    med = pd.Series(cudnn, dtype=np.float64).groupby(problem).median()
    return med.reindex(range(n_problems)).to_numpy(dtype=np.float64)
