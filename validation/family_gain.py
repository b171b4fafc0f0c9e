"""What one kernel family (or part of its configs) adds over the rest, from sweep CSVs.

    python -m convdispatch.validation.family_gain --family depthwise_rows \
        data/sweeps/h100/train.csv data/sweeps/h100/holdout.csv [--only GLOB]
    python -m convdispatch.validation.family_gain --family 'implicit_gemm_tma*' \
        --config '*TILE_W=[124];*' data/sweeps/h100/train.csv

Per problem with ok rows of the selection (families matching ``--family``, configs
matching ``--config``; fnmatch patterns) and of at least one other row: the
selection's best latency, the best of the rest and cuDNN's; then the geometric mean
and range of (rest's best / selection's best), and of cuDNN over the best of all,
before and after the selection. Markdown on stdout.
"""

from __future__ import annotations

import argparse
import fnmatch
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .sweep_summary import _load


def gain_table(csvs: Sequence[str], family: str, only: str | None = None,
               config: str | None = None) -> pd.DataFrame:
    """One row per problem: the selection's best, the rest's best, cuDNN (microseconds)."""
    df = _load(csvs)
    ok = df[df["status"] == "ok"]
    if only:
        ok = ok[ok["problem_id"].map(lambda p: fnmatch.fnmatch(p, only))]
    sel = ok["family"].map(lambda f: fnmatch.fnmatch(f, family))
    if config:
        sel &= ok["config"].map(lambda c: fnmatch.fnmatch(c, config))
    if not sel.any():
        raise ValueError(f"no ok row of family {family!r}"
                         + (f" with config {config!r}" if config else "") + f" in {list(csvs)}"
                         + (f" matching {only!r}" if only else ""))
    mine = ok[sel].groupby("key")["latency_us"].min()
    others = ok[~sel].groupby("key")["latency_us"].min()
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
    ap.add_argument("--family", required=True, help="family name or fnmatch pattern")
    ap.add_argument("--config", default=None, metavar="GLOB",
                    help="only the selected families' configs whose text matches (fnmatch)")
    ap.add_argument("--only", default=None, metavar="GLOB",
                    help="problems whose id matches (fnmatch)")
    a = ap.parse_args(argv)
    label = a.family + (f" {a.config}" if a.config else "")
    print(gain_markdown(gain_table(a.csvs, a.family, a.only, a.config), label), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
