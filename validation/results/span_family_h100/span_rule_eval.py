"""The rule chooser's span rule (dispatcher/choosers.py: span_pays) on the H100 sweep rows.

    python validation/results/span_family_h100/span_rule_eval.py

Per depthwise problem with rows of both ``depthwise_rows`` and ``depthwise_span``: each
family's best latency; then, over problems, the geomean of (better family's best /
picked family's best) for the rule, always-rows and always-span, and how often and by
how much span's best beats rows' best.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from convdispatch.dispatcher.choosers import span_pays
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.validation.sweep_csv import read_sweep

CSVS = ("data/sweeps/h100/train.csv", "data/sweeps/h100/holdout.csv")


def main() -> None:
    df = pd.concat([read_sweep(c) for c in CSVS])
    ok = df[(df["status"] == "ok") & df["family"].isin(["depthwise_rows", "depthwise_span"])]
    best = ok.groupby(["problem_id", "family"])["latency_us"].min().unstack().dropna()
    first = ok.groupby("problem_id").first().loc[best.index]
    use = pd.Series([span_pays(ConvGeometry.from_row(r)) for _, r in first.iterrows()],
                    index=best.index)
    better = best.min(axis=1)
    ratio = best["depthwise_rows"] / best["depthwise_span"]
    print(f"{len(best)} problems with both families; span's best faster on "
          f"{int((ratio > 1).sum())} (rows / span: min {ratio.min():.3f}, "
          f"max {ratio.max():.3f})")
    for name, pick in (("rule (span_pays)", use), ("always depthwise_rows", use & False),
                       ("always depthwise_span", use | True)):
        chosen = np.where(pick, best["depthwise_span"], best["depthwise_rows"])
        eff = better / chosen
        print(f"{name:24s} geomean {np.exp(np.log(eff).mean()):.3f}  min {eff.min():.3f}  "
              f"span picked on {int(pick.sum())}")


if __name__ == "__main__":
    main()
