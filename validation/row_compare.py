"""Sweep rows measured again against the rows they replaced (set aside by
``convdispatch retire``): per config, per family, per problem, and the best of every
family against cuDNN before and after.

    python -m convdispatch.validation.row_compare SWEEP.csv OLD_ROWS.csv[.gz] [--show SUBSTR]
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
    lines += [f"problems {len(best)}: the families' best old/new "
              f"{geomean(best.old / best.new):.3f}x",
              f"best of every family vs cuDNN: before "
              f"{geomean(best.cudnn / best.best_before):.3f}x, now "
              f"{geomean(best.cudnn / best.best_now):.3f}x"]
    if show:
        lines.append(best[best.index.str.contains(show, regex=False)].round(1).to_string())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweep", help="the sweep CSV holding the rows measured again")
    ap.add_argument("old", help="the rows they replaced (a .retired.csv, gzipped or not)")
    ap.add_argument("--show", help="also list the problems whose id holds this text")
    args = ap.parse_args(argv)
    try:
        print(compare(pd.read_csv(args.sweep), pd.read_csv(args.old), args.show))
    except (OSError, ValueError, pd.errors.ParserError) as e:
        print(f"row_compare: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
