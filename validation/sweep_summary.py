"""Markdown summary of sweep CSVs: coverage, per-problem spread, family wins, harness speed.

    python -m convdispatch.validation.sweep_summary data/sweeps/h100/*.csv
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .sweep_csv import read_sweep


def _load(paths: Sequence[str]) -> pd.DataFrame:
    """Rows of every file, with the file's name and a problem key unique across files (a
    dgrad and a wgrad sweep hold the same problem ids, but they are different problems)."""
    frames = [read_sweep(p).assign(file=Path(p).name, path=str(Path(p).resolve()))
              for p in paths]
    df = pd.concat(frames, ignore_index=True)
    return df.assign(key=df["path"] + "\x1f" + df["problem_id"])


def spread_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per problem: best, median and worst ok latency, and the cuDNN time."""
    ok = df[df["status"] == "ok"]
    g = ok.groupby("key")
    out = pd.DataFrame({"best": g["latency_us"].min(), "median": g["latency_us"].median(),
                        "worst": g["latency_us"].max(), "cudnn": g["cudnn_us"].first(),
                        "candidates": g.size()})
    win = ok.loc[g["latency_us"].idxmin(), ["key", "family", "g", "c", "file"]]
    return out.join(win.set_index("key"))


def _quant(s: pd.Series) -> str:
    s = s.dropna()
    q = np.quantile(s, [0.1, 0.5, 0.9])
    return f"{q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f} ({len(s)} problems)"


def _num(v, digits: int) -> str:
    """A number for the table; '-' where the run had none (nothing was timed)."""
    return "-" if v is None else f"{v:.{digits}f}"


def harness_lines(paths: Sequence[str]) -> list[str]:
    lines = ["| file | run | problems done | rows | check s | timing s | timed/s after "
             "compile | mean compile s | wall min |", "|---|---|---|---|---|---|---|---|---|"]
    total_min = 0.0
    for p in paths:
        side = Path(p).with_suffix(".meta.json")
        if not side.exists():
            continue
        meta = json.loads(side.read_text())
        for i, run in enumerate(meta.get("runs", [])):
            s = run.get("summary")
            if s is None:  # killed before its summary was written; its rows are in the CSV
                lines.append(f"| {Path(p).name} | {i} | no summary (run stopped before "
                             f"writing it; started {run.get('start', '?')}) | | | | | | |")
                continue
            total_min += s["wall_min"]
            lines.append(f"| {Path(p).name} | {i} | {s['problems_done']} | {s['rows_written']} | "
                         f"{_num(s['check_s'], 0)} | {_num(s['timing_s'], 0)} | "
                         f"{_num(s['candidates_timed_per_s'], 1)} | "
                         f"{_num(s['compile_s_mean'], 2)} | {_num(s['wall_min'], 1)} |")
    lines.append(f"\nGPU wall time of all runs: {total_min:.1f} min.")
    return lines


def summary_markdown(paths: Sequence[str]) -> str:
    df = _load(paths)
    sp = spread_table(df)
    first = df.drop_duplicates("key")
    lines = [f"Files: {', '.join(Path(p).name for p in paths)}; GPU: "
             f"{', '.join(sorted(df['gpu'].unique()))}.", "",
             "| file | problems | rows | candidates/problem | fp16 / bf16 / fp32 problems | "
             "2D / 3D | dense / grouped / depthwise |", "|---|---|---|---|---|---|---|"]
    for path, part in first.groupby("path"):
        name = part["file"].iloc[0]
        rows = df[df["path"] == path]
        dt = part["dtype"].value_counts()
        dims = part["dims"].value_counts()
        dw = (part["g"] > 1) & (part["g"] == part["c"])
        grouped = (part["g"] > 1) & ~dw
        lines.append(f"| {name} | {len(part)} | {len(rows)} | "
                     f"{len(rows) / len(part):.1f} | {dt.get('float16', 0)} / "
                     f"{dt.get('bfloat16', 0)} / {dt.get('float32', 0)} | {dims.get(2, 0)} / "
                     f"{dims.get(3, 0)} | {(~grouped & ~dw).sum()} / {grouped.sum()} / "
                     f"{dw.sum()} |")
    lines += ["", f"All: {len(first)} problems, {len(df)} rows, "
              f"{len(df) / len(first):.1f} candidates per problem, statuses "
              f"{df['status'].value_counts().to_dict()}.", "",
              "### Spread of candidate latency per problem (P10 / median / P90 over problems)",
              "", "| ratio | P10 / median / P90 |", "|---|---|",
              f"| worst / best | {_quant(sp['worst'] / sp['best'])} |",
              f"| median / best | {_quant(sp['median'] / sp['best'])} |",
              f"| cuDNN / best (above 1: our best beats cuDNN) | "
              f"{_quant(sp['cudnn'] / sp['best'])} |", "",
              "### Which family wins (problems where its best config is the fastest)", "",
              "| family | wins | share |", "|---|---|---|"]
    wins = sp["family"].value_counts()
    lines += [f"| {f} | {n} | {n / len(sp):.0%} |" for f, n in wins.items()]
    lines += ["", "### Harness speed (from the sidecars)", "", *harness_lines(paths)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csvs", nargs="+")
    args = ap.parse_args(argv)
    print(summary_markdown(args.csvs), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
