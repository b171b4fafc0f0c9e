"""The rule chooser's pick on the problems pointwise_tma supports, for several input-
channel thresholds of `choosers.tma_pays` (TMA_MIN_C), from the H100 sweep rows.

    python validation/results/pointwise_tma_h100/tma_rule_eval.py

Efficiency = the problem's best measured latency (all families) / the latency of the
rule's pick, geometric mean over problems; "never" keeps 1x1s on `pointwise`.
"""

from __future__ import annotations

import math

import numpy as np
from convdispatch.dispatcher import choosers
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.device import lookup
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.validation.sweep_csv import read_sweep

H100 = lookup("h100")
THRESHOLDS = {"never": math.inf, "any C": 0, "C > 32": 32, "C > 64": 64}


def efficiency(path: str, min_c: float) -> tuple[int, float]:
    df = read_sweep(path)
    df = df[df["status"] == "ok"]
    on = df[df["problem_id"].isin(set(df.loc[df["family"] == "pointwise_tma", "problem_id"]))]
    saved = choosers.TMA_MIN_C
    choosers.TMA_MIN_C = min_c
    try:
        eff = []
        for _, rows in on.groupby("problem_id"):
            geom = ConvGeometry.from_row(rows.iloc[0])
            lat = dict(zip(rows["family"] + ":" + rows["config"], rows["latency_us"]))
            cands = [Candidate(f, Config.parse(c)) for f, c in zip(rows["family"], rows["config"])]
            pick = choosers.RuleChooser().choose(geom, cands, H100).candidate
            eff.append(rows["latency_us"].min() / lat[pick.id])
    finally:
        choosers.TMA_MIN_C = saved
    return len(eff), float(np.exp(np.mean(np.log(eff))))


def main() -> int:
    print("| plan | problems | " + " | ".join(THRESHOLDS) + " |")
    print("|---" * (2 + len(THRESHOLDS)) + "|")
    for plan in ("train", "holdout"):
        path = f"data/sweeps/h100/{plan}.csv"
        cells = [efficiency(path, t) for t in THRESHOLDS.values()]
        print(f"| {plan} | {cells[0][0]} | " + " | ".join(f"{e:.3f}" for _, e in cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
