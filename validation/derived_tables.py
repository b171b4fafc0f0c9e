"""Markdown tables for the ``derived.py`` scripts of ``validation/results/*/``: ratios'
geomeans (a paired probe's, rows measured again against the rows ``convdispatch retire``
set aside) and the suite files they read. One suite run against another:
``bench_layers.category_pair_lines``, ``layer_pair_lines``, ``rerun_lines`` and
``backward_run_lines``, on ``bench_rows`` / ``full_pass``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .bench_layers import category_pair_lines, layer_pair_lines
from .row_compare import KEY, geomean

DTYPES = (("float16", "fp16"), ("bfloat16", "bf16"))
# Problem-id prefixes of the sets holding the issue-6 suite's grouped layers (ResNeXt-50,
# ResNeXt3D-50).
GROUPED_SUITE = ("resnext50_32x4d/", "video3d/resnext3d_50.")
SWEEPS = Path(__file__).resolve().parents[1] / "data" / "sweeps" / "h100"


def line(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table_head(columns: list[str]) -> list[str]:
    return [line(columns), line(["---"] * len(columns))]


def heading(title: str, text: str, columns: list[str]) -> list[str]:
    """A section's title, its sentence and the head of its table."""
    return [f"## {title}", ""] + ([text, ""] if text else []) + table_head(columns)


def summary(x: pd.Series) -> list:
    """Geomean, count, min and max of a series of ratios, as table cells."""
    return [f"{geomean(x):.3f}", len(x), f"{x.min():.2f}", f"{x.max():.2f}"]


def dims_of(problem_ids: pd.Series) -> np.ndarray:
    return np.where(problem_ids.str.startswith("video3d"), "3D", "2D")


def probe_lines(d: pd.DataFrame, title: str, text: str, ratio: str) -> list[str]:
    """A paired probe's ratios (column ``x``, headed ``ratio``) by dims and over all, with
    how many configs gave the same bits both ways."""
    d = d.assign(dims=dims_of(d.problem_id))
    out = heading(title, text, ["layers", ratio, "configs", "min", "max", "same bits"])
    for dims, g in [*d.groupby("dims"), ("all", d)]:
        out.append(line([dims, *summary(g.x), f"{int(g.same_bits.sum())} of {len(g)}"]))
    return out + [""]


def retired_pairs(folder: Path, name: str) -> pd.DataFrame:
    """``retired_NAME.csv.gz`` (the rows set aside) against ``new_NAME.csv.gz`` (the same
    configs measured again) of ``folder``: x is old / new latency."""
    old = pd.read_csv(folder / f"retired_{name}.csv.gz")
    new = pd.read_csv(folder / f"new_{name}.csv.gz")
    m = old[KEY + ["latency_us"]].merge(new[KEY + ["latency_us", "status"]], on=KEY,
                                        suffixes=("_old", "_new"))
    m["x"] = m.latency_us_old / m.latency_us_new
    m["dims"] = dims_of(m.problem_id)
    m["block_n"] = m.config.str.extract(r"BLOCK_N=(\d+)")[0].astype(int)
    return m


def forward_sweep_rows() -> pd.DataFrame:
    """The ok rows of the committed H100 forward sweeps, both plans (train, holdout)."""
    d = pd.concat(pd.read_csv(SWEEPS / f"{plan}.csv") for plan in ("train", "holdout"))
    return d[d.status == "ok"].copy()


def sweep_lines(folder: Path, name: str, title: str, call: str,
                suite: tuple[str, ...]) -> list[str]:
    """Per config (by dims and BLOCK_N) and the family's best row a problem, old / new;
    the best rows of the problems whose ids start with one of ``suite``."""
    m = retired_pairs(folder, name)
    status = ", ".join(f"{k} {v}" for k, v in m.status.value_counts().items())
    out = heading(f"{title}: {len(m)} configs measured again ({call})",
                  f"All new rows {status}.",
                  ["dims", "block_n", "old / new (geomean)", "rows", "min", "max"])
    for (dims, bn), g in [*m.groupby(["dims", "block_n"]), (("all", ""), m)]:
        out.append(line([dims, bn, *summary(g.x)]))
    best = m.groupby("problem_id")[["latency_us_old", "latency_us_new"]].min()
    bx = best.latency_us_old / best.latency_us_new
    out += ["", f"The family's best row a problem, old / new: {geomean(bx):.3f}x over "
            f"{len(bx)} problems (faster on {int((bx > 1.01).sum())}, slower on "
            f"{int((bx < 0.99).sum())}, min {bx.min():.3f}, max {bx.max():.3f}).", ""]
    shown = best[best.index.str.startswith(suite)]
    if len(shown):
        out += table_head(["problem", "before (us)", "now (us)"])
        out += [line([p, f"{r.latency_us_old:.1f}", f"{r.latency_us_new:.1f}"])
                for p, r in shown.iterrows()]
        out.append("")
    return out


def bench_rows(path: Path) -> list[dict]:
    """A suite run's ``bench.csv`` rows (the form ``bench_layers``' run tables take)."""
    return pd.read_csv(path).to_dict("records")


def full_pass(path: Path) -> dict[str, dict]:
    """A backward suite's rows of one pass (direction "full") by problem id."""
    return {r["problem_id"]: r for r in bench_rows(path / "bench.csv")
            if r["direction"] == "full"}


def suite_lines(before: Path, after: Path, title: str, names: tuple[str, str]) -> list[str]:
    """Run ``after`` of the issue-6 suite against run ``before`` (folders holding
    ``issue6_{fp16,bf16}/bench.csv``): a heading, ``category_pair_lines`` of both dtypes,
    then ``layer_pair_lines`` of the grouped layers a dtype (columns headed ``names``)."""
    out = heading(title, "", ["dtype", "category", "layers", "x cuDNN before", "after",
                              "min after", "our time before / after",
                              "cuDNN's before / after", "choices changed"])
    tables = []
    for dtype, short in DTYPES:
        old = {r["problem_id"]: r for r in bench_rows(before / f"issue6_{short}" / "bench.csv")}
        new = bench_rows(after / f"issue6_{short}" / "bench.csv")
        out += category_pair_lines(old, new, dtype)
        tables += ["", f"Grouped layers, {dtype}:", "",
                   *layer_pair_lines(old, new, "grouped", *names)]
    return out + tables + [""]
