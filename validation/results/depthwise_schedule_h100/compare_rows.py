"""The re-swept depthwise families against their old rows (this folder's ``old_rows/``).

    python validation/results/depthwise_schedule_h100/compare_rows.py

For the forward ``depthwise_span`` rows and the dgrad ``dgrad_depthwise_span`` /
``dgrad_depthwise`` rows: the family's best per problem, old / new; the best of every
family per problem, old / new (the other families' rows are the same in both); and
cuDNN / best measured before and after, over all the problems and over MobileNetV2's
batch-32 fp16 layers. Run from the repository root.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
PLANS = [
    (["train.csv", "holdout.csv"], ["depthwise_span"],
     ["train_depthwise_span.csv.gz", "holdout_depthwise_span.csv.gz"]),
    (["bwd_dgrad.csv"], ["dgrad_depthwise_span", "dgrad_depthwise"],
     ["bwd_dgrad_dgrad_depthwise_dgrad_depthwise_span.csv.gz"]),
]


def geomean(x) -> float:
    return float(np.exp(np.log(x).mean()))


def ok_rows(paths) -> pd.DataFrame:
    frame = pd.concat([pd.read_csv(p, low_memory=False) for p in paths])
    return frame[frame.status == "ok"]


def main() -> None:
    for csvs, families, old_files in PLANS:
        new = ok_rows(Path("data/sweeps/h100") / c for c in csvs)
        old = ok_rows(HERE / "old_rows" / f for f in old_files)
        new = new[new.problem_id.isin(set(old.problem_id))]
        old_all = pd.concat([new[~new.family.isin(families)], old])
        fam_ratio = (old.groupby("problem_id").latency_us.min()
                     / new[new.family.isin(families)].groupby("problem_id").latency_us.min())
        best_old = old_all.groupby("problem_id").latency_us.min()
        best_new = new.groupby("problem_id").latency_us.min()
        cudnn = new.groupby("problem_id").cudnn_us.first()
        mobilenet = [p for p in best_new.index
                     if p.startswith("mobilenet_v2/") and "/n32/float16" in p]
        print(f"{', '.join(families)}: {len(best_new)} problems")
        print(f"  family best old/new geomean {geomean(fam_ratio):.3f} (min "
              f"{fam_ratio.min():.3f}, max {fam_ratio.max():.3f}, faster on "
              f"{(fam_ratio > 1).sum()})")
        print(f"  best of all families old/new {geomean(best_old / best_new):.3f}; cuDNN / "
              f"best {geomean(cudnn / best_old):.3f} -> {geomean(cudnn / best_new):.3f}")
        print(f"  MobileNetV2 n32 fp16 ({len(mobilenet)}): cuDNN / best "
              f"{geomean((cudnn / best_old)[mobilenet]):.3f} -> "
              f"{geomean((cudnn / best_new)[mobilenet]):.3f}")


if __name__ == "__main__":
    main()
