"""The grouped dgrad rows re-swept in call 115 (the stored filter read in place) against the
rows they replaced (a regrouped copy first), per config and per problem, and the best of
every dgrad family against cuDNN before and after. Run from anywhere:

    python3 validation/results/grouped_dgrad_inplace_h100/compare_rows.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
FAMILIES = ["dgrad_grouped_packed", "dgrad_grouped_rows"]
KEY = ["problem_id", "family", "config"]


def geomean(ratio) -> float:
    return float(np.exp(np.log(ratio).mean()))


def main() -> None:
    new = pd.read_csv(HERE.parents[2] / "data/sweeps/h100/bwd_dgrad.csv")
    old = pd.read_csv(HERE / "old_rows/bwd_dgrad_grouped.csv.gz")
    fresh = new[new.family.isin(FAMILIES)]
    both = fresh.merge(old, on=KEY, suffixes=("_new", "_old"))
    both = both[(both.ok_new == 1) & (both.ok_old == 1)]
    saved = both.latency_us_old - both.latency_us_new
    print(f"rows {len(fresh)}, both ok {len(both)}: per config old/new "
          f"{geomean(both.latency_us_old / both.latency_us_new):.3f}x, "
          f"median saved {saved.median():.2f} us")
    best = pd.DataFrame(dict(
        old=old[old.ok == 1].groupby("problem_id").latency_us.min(),
        new=fresh[fresh.ok == 1].groupby("problem_id").latency_us.min(),
        others=new[~new.family.isin(FAMILIES) & (new.ok == 1)].groupby(
            "problem_id").latency_us.min(),
        cudnn=new.groupby("problem_id").cudnn_us.median())).dropna(subset=["old", "new"])
    best["best_before"] = best[["old", "others"]].min(axis=1)
    best["best_now"] = best[["new", "others"]].min(axis=1)
    print(f"problems {len(best)}: the two families' best old/new "
          f"{geomean(best.old / best.new):.3f}x")
    print(f"best of every dgrad family vs cuDNN: before "
          f"{geomean(best.cudnn / best.best_before):.3f}x, now "
          f"{geomean(best.cudnn / best.best_now):.3f}x")
    print(best[best.index.str.contains("/n32/")].round(1).to_string())


if __name__ == "__main__":
    main()
