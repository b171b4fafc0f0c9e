"""The guard: a second model that vetoes the ranker's picks it predicts to be far slower.

The LambdaRank model orders candidates well near the top, but where a geometry lies
outside its training data it can put a candidate 10x slower than the rest first (on
the H100 holdout: a 7x7 dilation-3 depthwise conv, grouped_direct ranked over
depthwise, 1504 us against 91). The guard is a regression on ln(latency / the
problem's best) (``lgbm_regression_rel``): among the ranker's ``top_k`` candidates,
each whose predicted slowdown exceeds the smallest of them by more than
``max_log_slowdown`` is moved behind all others, keeping the ranker's order
otherwise. Only ``top_k`` candidates are scored by the guard, so it adds little to a
cold decision. Whether a model ships a guard, and its threshold, is decided by grouped
cross-validation in training (``train.choose_guard``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GUARD_METHOD = "lgbm_regression_rel"
TOP_K = 5
THRESHOLDS = (0.5, 0.7, 1.0)  # ln slowdown over the top-k's best: 1.65x, 2x, 2.7x


@dataclass(frozen=True)
class GuardParams:
    top_k: int = TOP_K
    max_log_slowdown: float = 0.7

    def check(self, where: str = "guard") -> None:
        if not (isinstance(self.top_k, int) and self.top_k >= 2):
            raise ValueError(f"{where}: top_k must be an int >= 2, got {self.top_k!r}")
        t = self.max_log_slowdown
        if not (isinstance(t, (int, float)) and np.isfinite(t) and t > 0):
            raise ValueError(f"{where}: max_log_slowdown must be a positive number, got {t!r}")


def demote(scores: np.ndarray, vetoed: np.ndarray,
           group: np.ndarray | None = None) -> np.ndarray:
    """``scores`` (lower first) with the rows ``vetoed`` (bool) moved behind every other
    row of their ``group`` (default: one group), their own order kept."""
    out = np.asarray(scores, dtype=np.float64).copy()
    if not vetoed.any():
        return out
    grp = np.zeros(len(out), dtype=np.intp) if group is None else group
    finite = np.isfinite(out)
    n = int(grp.max()) + 1
    lo, hi = np.full(n, np.inf), np.full(n, -np.inf)
    np.minimum.at(lo, grp[finite], out[finite])
    np.maximum.at(hi, grp[finite], out[finite])
    none = ~np.isfinite(lo)  # a group without finite scores: offsets from 0
    lo[none], hi[none] = 0.0, 0.0
    g = grp[vetoed]
    out[vetoed] = hi[g] + 1.0 + (out[vetoed] - lo[g])
    return out


def vetoed_in_top(top_pred: np.ndarray, params: GuardParams) -> np.ndarray:
    """Which of the ranker's top candidates the guard vetoes, from their predicted ln
    slowdowns (in the ranker's order)."""
    return top_pred - top_pred.min() > params.max_log_slowdown


def guarded_scores(problem: np.ndarray, scores: np.ndarray, guard_pred: np.ndarray,
                   params: GuardParams) -> np.ndarray:
    """Per-row scores of many problems at once (training and reports): ``guard_pred`` is
    the guard's prediction for every row; only each problem's top-k rows use it (equal
    scores in row order, as dispatch takes candidates in list order)."""
    scores = np.asarray(scores, dtype=np.float64)
    if len(scores) == 0:
        return scores.copy()
    grp = np.unique(problem, return_inverse=True)[1].ravel()
    order = np.lexsort((scores, grp))  # stable: equal scores keep their row order
    g = grp[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    pos = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    top = np.zeros(len(scores), dtype=bool)
    top[order] = pos < params.top_k
    best = np.full(int(grp.max()) + 1, np.inf)
    np.minimum.at(best, grp[top], guard_pred[top])
    vetoed = top & (guard_pred - best[grp] > params.max_log_slowdown)
    return demote(scores, vetoed, grp)
