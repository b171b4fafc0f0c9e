"""What one kernel family adds over the others, from sweep CSVs (markdown).

    python -m convdispatch.validation.family_gain --family depthwise_rows \
        data/sweeps/h100/train.csv data/sweeps/h100/holdout.csv [--only GLOB]

Per problem with ok rows of the family and of at least one other family: the
family's best latency, the best of the other families and cuDNN's; then the
geometric mean and range of (others' best / family's best), and of cuDNN over the
best of all, before and after the family.
"""

from __future__ import annotations

import argparse
import fnmatch
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .sweep_summary import _load


def gain_table(csvs: Sequence[str], family: str, only: str | None = None) -> pd.DataFrame:
    """One row per problem: family best, others' best, cuDNN (microseconds)."""
    df = _load(csvs)
    ok = df[df["status"] == "ok"]
    if only:
        ok = ok[ok["problem_id"].map(lambda p: fnmatch.fnmatch(p, only))]
    if family not in set(ok["family"]):
        raise ValueError(f"no ok row of family {family!r} in {list(csvs)}"
                         + (f" matching {only!r}" if only else ""))
    mine = ok[ok["family"] == family].groupby("key")["latency_us"].min()
    others = ok[ok["family"] != family].groupby("key")["latency_us"].min()
    out = pd.DataFrame({"family_us": mine, "others_us": others}).dropna()
    first = ok.groupby("key")[["problem_id", "cudnn_us"]].first()
    return first.join(out, how="inner").sort_values("problem_id")


def _geo(s: pd.Series) -> float:
    return float(np.exp(np.log(s.astype(float)).mean()))


def gain_markdown(t: pd.DataFrame, family: str) -> str:
    ratio = t["others_us"] / t["family_us"]
    before = t["cudnn_us"] / t["others_us"]
    after = t["cudnn_us"] / t[["family_us", "others_us"]].min(axis=1)
    lines = [
        f"`{family}` on {len(t)} problems: others' best / its best, geomean "
        f"{_geo(ratio):.3f} (min {ratio.min():.3f}, max {ratio.max():.3f}; it is faster on "
        f"{int((ratio > 1).sum())}); cuDNN / best measured, geomean {_geo(before.dropna()):.3f} "
        f"without it, {_geo(after.dropna()):.3f} with it.", "",
        f"| problem | {family} us | others' best us | cuDNN us | others / {family} |",
        "|---|---|---|---|---|",
    ]
    for (_, r), x in zip(t.iterrows(), ratio):
        lines.append(f"| {r['problem_id']} | {r['family_us']:.1f} | {r['others_us']:.1f} | "
                     f"{r['cudnn_us']:.1f} | {x:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csvs", nargs="+")
    ap.add_argument("--family", required=True)
    ap.add_argument("--only", default=None, metavar="GLOB",
                    help="problems whose id matches (fnmatch)")
    a = ap.parse_args(argv)
    print(gain_markdown(gain_table(a.csvs, a.family, a.only), a.family), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
