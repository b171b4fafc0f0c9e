"""Sweep rows measured again against the rows they replaced (set aside by
``convdispatch retire``): per config, per family, per problem, and the best of every
family against cuDNN before and after.

    python -m convdispatch.validation.row_compare SWEEP.csv [SWEEP.csv ...] \
        --old OLD_ROWS.csv[.gz] [OLD ...] [--show SUBSTR]

Several sweeps (train.csv and holdout.csv) or sets of old rows are read as one.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

KEY = ["problem_id", "family", "config"]


def geomean(ratio) -> float:
    return float(np.exp(np.log(ratio).mean()))


def compare(sweep: pd.DataFrame, old: pd.DataFrame, show: str | None = None) -> str:
    """The report as text. ``show``: also list the problems whose id holds it."""
    for name, df in (("sweep", sweep), ("old rows", old)):
        missing = [c for c in KEY + ["ok", "latency_us", "cudnn_us"] if c not in df.columns]
        if missing:
            raise ValueError(f"the {name} CSV lacks the columns {missing}")
    fresh = sweep.merge(old[KEY], on=KEY)
    both = fresh.merge(old, on=KEY, suffixes=("_new", "_old"))
    both = both[(both.ok_new == 1) & (both.ok_old == 1)]
    if both.empty:
        raise ValueError("no row of the old CSV was measured again (ok) in the sweep")
    ratio = both.latency_us_old / both.latency_us_new
    saved = both.latency_us_old - both.latency_us_new
    lines = [f"rows measured again {len(fresh)} of {len(old)}, both ok {len(both)}: per config "
             f"old/new {geomean(ratio):.3f}x, median saved {saved.median():.2f} us",
             "per family (old/new, geomean over configs):"]
    for fam, r in ratio.groupby(both.family):
        lines.append(f"  {fam:28s} {geomean(r):.3f}x ({len(r)} rows)")
    remeasured = set(old.family)
    rest = sweep[~sweep.family.isin(remeasured) & (sweep.ok == 1)]
    best = pd.DataFrame(dict(
        old=old[old.ok == 1].groupby("problem_id").latency_us.min(),
        new=fresh[fresh.ok == 1].groupby("problem_id").latency_us.min(),
        others=rest.groupby("problem_id").latency_us.min(),
        cudnn=sweep.groupby("problem_id").cudnn_us.median())).dropna(subset=["old", "new"])
    best["best_before"] = best[["old", "others"]].min(axis=1)
    best["best_now"] = best[["new", "others"]].min(axis=1)
    lines += _summary(best, "")
    if show:
        shown = best[best.index.str.contains(show, regex=False)]
        if len(shown):
            lines += _summary(shown, f" [{show}]")
        lines.append(shown.round(1).to_string())
    return "\n".join(lines)


def _summary(best: pd.DataFrame, label: str) -> list[str]:
    """The per-problem lines of ``compare`` over ``best``'s problems."""
    gain = best.old / best.new
    return [f"problems{label} {len(best)}: the families' best old/new {geomean(gain):.3f}x "
            f"(min {gain.min():.3f}, max {gain.max():.3f}, faster on {(gain > 1).sum()})",
            f"best of every family vs cuDNN{label}: before "
            f"{geomean(best.cudnn / best.best_before):.3f}x, now "
            f"{geomean(best.cudnn / best.best_now):.3f}x"]


def read_csvs(paths: list[str]) -> pd.DataFrame:
    """Several CSVs as one frame."""
    return pd.concat([pd.read_csv(p, low_memory=False) for p in paths], ignore_index=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweeps", nargs="+", help="the sweep CSVs holding the rows measured again")
    ap.add_argument("--old", nargs="+", required=True,
                    help="the rows they replaced (.retired.csv files, gzipped or not)")
    ap.add_argument("--show", help="also summarise and list the problems whose id holds this")
    args = ap.parse_args(argv)
    try:
        print(compare(read_csvs(args.sweeps), read_csvs(args.old), args.show))
    except (OSError, ValueError, pd.errors.ParserError) as e:
        print(f"row_compare: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
