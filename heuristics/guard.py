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
import pandas as pd

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


def demote(scores: np.ndarray, vetoed: np.ndarray) -> np.ndarray:
    """``scores`` (lower first) with the rows ``vetoed`` (bool) moved behind every other
    row, their own order kept."""
    out = np.asarray(scores, dtype=np.float64).copy()
    if not vetoed.any():
        return out
    finite = out[np.isfinite(out)]
    lo, hi = (finite.min(), finite.max()) if len(finite) else (0.0, 0.0)
    out[vetoed] = hi + 1.0 + (out[vetoed] - lo)
    return out


def vetoed_in_top(top_pred: np.ndarray, params: GuardParams) -> np.ndarray:
    """Which of the ranker's top candidates the guard vetoes, from their predicted ln
    slowdowns (in the ranker's order)."""
    return top_pred - top_pred.min() > params.max_log_slowdown


def guarded_scores(problem: np.ndarray, scores: np.ndarray, guard_pred: np.ndarray,
                   params: GuardParams) -> np.ndarray:
    """Per-row scores of many problems at once (training and reports): ``guard_pred`` is
    the guard's prediction for every row; only each problem's top-k rows use it."""
    scores = np.asarray(scores, dtype=np.float64)
    frame = pd.DataFrame({"p": problem, "s": scores, "g": guard_pred})
    pos = frame.groupby("p")["s"].rank(method="first").to_numpy()
    top = pos <= params.top_k
    best = pd.Series(np.where(top, guard_pred, np.inf)).groupby(problem).transform("min")
    vetoed = top & (guard_pred - best.to_numpy() > params.max_log_slowdown)
    out = scores.copy()
    for p in np.unique(problem[vetoed]):
        rows = problem == p
        out[rows] = demote(scores[rows], vetoed[rows])
    return out
