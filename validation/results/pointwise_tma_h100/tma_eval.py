"""pointwise_tma against the pointer-based pointwise kernel on the H100 sweep rows.

    python validation/results/pointwise_tma_h100/tma_eval.py

Per plan, over the problems pointwise_tma supports (1x1, stride 1, channels_last, 16-byte
channel rows): each family's best config, their ratio, and the best measured kernel of
all families against cuDNN with and without the new family's rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from convdispatch.validation.sweep_csv import read_sweep

PLANS = ("holdout", "train")


def gm(s: pd.Series) -> float:
    return float(np.exp(np.log(s).mean()))


def main() -> int:
    print("| plan | problems | pointwise best / pointwise_tma best: geomean | TMA faster on "
          "| min | max | best of all vs cuDNN without TMA | with TMA |")
    print("|---" * 8 + "|")
    for plan in PLANS:
        df = read_sweep(f"data/sweeps/h100/{plan}.csv")
        df = df[df["status"] == "ok"]
        tma = df[df["family"] == "pointwise_tma"]
        on = df[df["problem_id"].isin(set(tma["problem_id"]))]
        best_tma = tma.groupby("problem_id")["latency_us"].min()
        best_pw = on[on["family"] == "pointwise"].groupby("problem_id")["latency_us"].min()
        ratio = (best_pw / best_tma).dropna()
        cudnn = on.groupby("problem_id")["cudnn_us"].first()
        before = on[on["family"] != "pointwise_tma"].groupby("problem_id")["latency_us"].min()
        after = on.groupby("problem_id")["latency_us"].min()
        print(f"| {plan} | {len(ratio)} | {gm(ratio):.3f} | {(ratio > 1).sum()} | "
              f"{ratio.min():.2f} | {ratio.max():.2f} | {gm(cudnn[before.index] / before):.3f} "
              f"| {gm(cudnn[after.index] / after):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
