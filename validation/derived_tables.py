"""Markdown tables for the ``derived.py`` scripts of ``validation/results/*/``: ratios'
geomeans, rows measured again against the rows ``convdispatch retire`` set aside, and one
issue-6 suite run against another."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

KEY = ["problem_id", "family", "config"]


def gmean(x) -> float:
    return float(np.exp(np.log(np.asarray(x, dtype=float)).mean()))


def line(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table_head(columns: list[str]) -> list[str]:
    return [line(columns), line(["---"] * len(columns))]


def heading(title: str, text: str, columns: list[str]) -> list[str]:
    """A section's title, its sentence and the head of its table."""
    return [f"## {title}", ""] + ([text, ""] if text else []) + table_head(columns)


def summary(x: pd.Series) -> list:
    """Geomean, count, min and max of a series of ratios, as table cells."""
    return [f"{gmean(x):.3f}", len(x), f"{x.min():.2f}", f"{x.max():.2f}"]


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
    out += ["", f"The family's best row a problem, old / new: {gmean(bx):.3f}x over "
            f"{len(bx)} problems (faster on {int((bx > 1.01).sum())}, slower on "
            f"{int((bx < 0.99).sum())}, min {bx.min():.3f}, max {bx.max():.3f}).", ""]
    shown = best[best.index.str.startswith(suite)]
    if len(shown):
        out += table_head(["problem", "before (us)", "now (us)"])
        out += [line([p, f"{r.latency_us_old:.1f}", f"{r.latency_us_new:.1f}"])
                for p, r in shown.iterrows()]
        out.append("")
    return out


def suite_pairs(new_dir: Path, old_dir: Path, dtype: str) -> pd.DataFrame:
    """One dtype's issue-6 suite rows of two runs (``issue6_DTYPE/bench.csv`` in each
    folder), the older run's columns suffixed ``_old``."""
    new = pd.read_csv(new_dir / f"issue6_{dtype}" / "bench.csv")
    old = pd.read_csv(old_dir / f"issue6_{dtype}" / "bench.csv")
    return new.merge(old, on=["problem_id", "category"], suffixes=("", "_old"))


def suite_category_line(dtype: str, cat: str, g: pd.DataFrame) -> str:
    """x cuDNN before and now, our time and cuDNN's before / now, choices changed."""
    return line([dtype, cat, f"{gmean(g.speedup_vs_cudnn_old):.3f}",
                 f"{gmean(g.speedup_vs_cudnn):.3f}",
                 f"{gmean(g.call_us_old / g.call_us):.3f}",
                 f"{gmean(g.cudnn_us_old / g.cudnn_us):.3f}",
                 int((g.chosen != g.chosen_old).sum())])


SUITE_COLUMNS = ["dtype", "category", "x cuDNN before", "now", "our time before / now",
                 "cuDNN's before / now", "choices changed"]


def grouped_layer_lines(rows: list[pd.DataFrame]) -> list[str]:
    """The grouped layers of ``suite_pairs`` frames (a ``dtype`` column each)."""
    out = ["", "Grouped layers (us; x cuDNN):", ""] + table_head(
        ["layer", "dtype", "choice before -> now", "ours before", "now", "cuDNN before",
         "now", "x cuDNN now"])
    for g in rows:
        for _, r in g.iterrows():
            fam = r.chosen.split(":")[0]
            was = r.chosen_old.split(":")[0]
            out.append(line([r.problem_id.rsplit("/", 1)[0], r["dtype"],
                             fam if fam == was else f"{was} -> {fam}",
                             f"{r.call_us_old:.1f}", f"{r.call_us:.1f}",
                             f"{r.cudnn_us_old:.1f}", f"{r.cudnn_us:.1f}",
                             f"{r.speedup_vs_cudnn:.2f}"]))
    return out
