"""The implicit-GEMM tap loop before and after `kernels/common.tap_at` (eighth session),
from the H100 sweep rows of the same (problem, family, config) measured with each.

    python validation/results/tap_loop_h100/tap_loop_eval.py [OLD_COMMIT]

The old rows are read from git at OLD_COMMIT (default 6e6fd5d, the last commit with the
old kernels' rows; `convdispatch retire` set them aside before the re-sweep), the new
rows from data/sweeps/h100/. Prints markdown: per family and plan the geometric mean of
old/new latency over every matched config, and of each problem's best config.
"""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pandas as pd
from convdispatch.validation.sweep_csv import read_sweep

FAMILIES = ("implicit_gemm", "grouped_gemm", "splitk", "grouped_packed")
PLANS = ("holdout", "train")
KEY = ["problem_id", "family", "config"]


def old_rows(commit: str, plan: str) -> pd.DataFrame:
    text = subprocess.run(["git", "show", f"{commit}:data/sweeps/h100/{plan}.csv"],
                          capture_output=True, text=True, check=True).stdout
    return pd.read_csv(io.StringIO(text))


def gm(s: pd.Series) -> float:
    return float(np.exp(np.log(s).mean()))


def table(commit: str) -> str:
    lines = ["| plan | family | configs matched | old/new geomean | P10 | P90 | problems | "
             "best config old/new geomean | min | max |", "|---" * 10 + "|"]
    for plan in PLANS:
        new = read_sweep(f"data/sweeps/h100/{plan}.csv")
        old = old_rows(commit, plan)
        both = old.merge(new, on=KEY, suffixes=("_old", "_new"))
        both = both[(both.status_old == "ok") & (both.status_new == "ok")]
        for fam in FAMILIES:
            m = both[both.family == fam]
            if m.empty:
                continue
            ratio = m.latency_us_old / m.latency_us_new
            best = m.groupby("problem_id")[["latency_us_old", "latency_us_new"]].min()
            bratio = best.latency_us_old / best.latency_us_new
            lines.append(f"| {plan} | {fam} | {len(m)} | {gm(ratio):.3f} | "
                         f"{ratio.quantile(.1):.3f} | {ratio.quantile(.9):.3f} | {len(best)} | "
                         f"{gm(bratio):.3f} | {bratio.min():.3f} | {bratio.max():.3f} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    print(table(argv[0] if argv else "6e6fd5d"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
