"""The re-swept strided dgrad rows (calls 111-112) against the rows they replace
(``old_rows/``).

    python validation/results/strided_dgrad_h100/compare_rows.py

For each re-swept set (``dgrad_depthwise_span``: one launch of strided_span_dgrad_kernel
instead of one depthwise_span launch a stride phase; ``dgrad_grouped_packed`` and
``dgrad_grouped_rows``: one regrouped filter for all phases), per problem: the set's best
config before and now, the best of the other dgrad families (unchanged rows), cuDNN (the
sweep's median), and cuDNN / best measured before and now; then the geomean of old / new
over the configs swept both times. Run from the repository root.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
SETS = [(("dgrad_depthwise_span",), "bwd_dgrad_span_strided.csv.gz"),
        (("dgrad_grouped_packed", "dgrad_grouped_rows"), "bwd_dgrad_grouped_strided.csv.gz")]
KEY = ["problem_id", "family", "config"]


def geomean(x) -> float:
    return float(np.exp(np.log(np.asarray(x, dtype=float)).mean()))


def compare(new: pd.DataFrame, families: tuple[str, ...], old_file: str) -> None:
    old = pd.read_csv(HERE / "old_rows" / old_file)
    old = old[old.status == "ok"]
    problems = sorted(set(old.problem_id))
    mine = new[new.family.isin(families) & new.problem_id.isin(problems)]
    others = new[~new.family.isin(families) & new.problem_id.isin(problems)]
    t = pd.DataFrame({
        "old_best_us": old.groupby("problem_id").latency_us.min(),
        "new_best_us": mine.groupby("problem_id").latency_us.min(),
        "best_other_us": others.groupby("problem_id").latency_us.min(),
        "cudnn_us": new[new.problem_id.isin(problems)].groupby("problem_id").cudnn_us.median(),
    })
    t["gain"] = t.old_best_us / t.new_best_us
    t["cudnn_over_best_before"] = t.cudnn_us / t[["old_best_us", "best_other_us"]].min(axis=1)
    t["cudnn_over_best_now"] = t.cudnn_us / t[["new_best_us", "best_other_us"]].min(axis=1)
    pairs = old.merge(mine[KEY + ["latency_us"]], on=KEY, suffixes=("_old", "_new"))
    print(f"## {', '.join(families)}\n")
    print(f"{len(mine)} new rows ({mine.status.eq('ok').sum()} ok, max rel_err "
          f"{mine.rel_err.max():.1e}) on {len(problems)} problems; {len(old)} old rows\n")
    cols = list(t.columns)
    print("| problem | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for pid, row in t.iterrows():
        print(f"| {pid} | " + " | ".join(f"{v:.2f}" for v in row) + " |")
    mb = t[t.index.str.contains("/n32/float16") & t.index.str.startswith("mobilenet_v2/")]
    print(f"\ngeomean, all {len(t)}: the set's best old/new {geomean(t.gain):.3f} (min "
          f"{t.gain.min():.2f}); cuDNN / best measured {geomean(t.cudnn_over_best_before):.3f}"
          f" -> {geomean(t.cudnn_over_best_now):.3f}")
    print(f"same config old/new over {len(pairs)} pairs: "
          f"{geomean(pairs.latency_us_old / pairs.latency_us_new):.3f}")
    if len(mb):
        print(f"MobileNetV2 batch 32 ({len(mb)}): the set's best old/new {geomean(mb.gain):.3f}; "
              f"cuDNN / best measured {geomean(mb.cudnn_over_best_before):.3f} -> "
              f"{geomean(mb.cudnn_over_best_now):.3f}")
    print()


def main() -> None:
    new = pd.read_csv("data/sweeps/h100/bwd_dgrad.csv", low_memory=False)
    new = new[new.status == "ok"]
    for families, old_file in SETS:
        compare(new, families, old_file)


if __name__ == "__main__":
    main()
