"""The README's numbers that combine committed files (CPU; no GPU needed).

    cd validation/results/planar_flat_h100 && python derived.py > derived.md

Sweep rows: the current ones in data/sweeps/h100/ and the rows they replaced or that were
left out, kept here:
- ``*_rows32_unplanar.csv.gz``: 32-channel flat-grid rows of whole rows, calls 157-167;
- ``wgrad_rows_4buf.csv.gz``: wgrad_grouped_flat with four buffers (num_stages=4), the
  16-channel rows from call 167 (whole rows), the 32-channel ones from call 168 (planes);
- ``call168_wgrad_rows16_planar.csv.gz``: 16-channel wgrad rows in planes (call 168).
Each sweep CSV's meta.json names the GPU and the versions.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
SWEEPS = HERE.parents[2] / "data/sweeps/h100"


def gmean(x) -> float:
    return float(np.exp(np.log(np.asarray(x, dtype=float)).mean()))


def rows(path: Path) -> pd.DataFrame:
    d = pd.read_csv(path, low_memory=False)
    return d[d.status == "ok"]


def family_rows(sweep: str, family: str, block_n: int | None = None) -> pd.DataFrame:
    d = rows(SWEEPS / f"{sweep}.csv")
    d = d[d.family == family]
    return d if block_n is None else d[d.config.str.contains(f"BLOCK_N={block_n};")]


def compare(title: str, new: pd.DataFrame, old: pd.DataFrame) -> None:
    """Old latency / new latency: per config, and of each problem's best config."""
    m = new.merge(old[["problem_id", "config", "latency_us"]], on=["problem_id", "config"],
                  suffixes=("", "_old"))
    best = m.groupby("problem_id")[["latency_us", "latency_us_old"]].min()
    r = best.latency_us_old / best.latency_us
    print(f"| {title} | {len(m)} | {gmean(m.latency_us_old / m.latency_us):.3f} | "
          f"{best.index.size} | {gmean(r):.3f} | {r.min():.2f}-{r.max():.2f} |")


def ncu_summary() -> None:
    print("## Nsight Compute, call 166 (ResNeXt-50 batch 32, the wgrad model's configs)\n")
    print("| profile | kernel | duration us | warps a scheduler | shared-load wavefronts "
          "that are conflicts | top stall |")
    print("|---|---|---|---|---|---|")
    for f in sorted((HERE / "call166").glob("ncu_*.txt.gz")):
        text = gzip.open(f, "rt").read()
        for block in re.split(r"\n  (?=\S+_kernel|\S*xmma)", text)[1:]:
            name = block.split()[0].split("(")[0][:40]
            dur = re.search(r"Duration\s+us\s+([\d.]+)", block)
            warps = re.search(r"Active Warps Per Scheduler\s+warp\s+([\d.]+)", block)
            conf = re.search(r"which represent\s+([\d.]+)%", block)
            stall = re.search(r"spends ([\d.]+) cycles being stalled (.*?)\.", block, re.S)
            stall_text = (" ".join(stall.group(2).split())[:60] + f" ({stall.group(1)} cycles)"
                          if stall else "-")
            print(f"| {f.name[4:-7]} | {name} | {dur.group(1) if dur else '-'} | "
                  f"{warps.group(1) if warps else '-'} | "
                  f"{conf.group(1) + '%' if conf else '-'} | {stall_text} |")


def sweeps() -> None:
    print("\n## Sweep rows before and after (old latency / new latency)\n")
    print("| change | configs | per config, geomean | problems | best config, geomean | "
          "range |")
    print("|---|---|---|---|---|---|")
    wg = family_rows("bwd_wgrad", "wgrad_grouped_flat")
    four = rows(HERE / "wgrad_rows_4buf.csv.gz")
    four = four.assign(config=four.config.str.replace("num_stages=4", "num_stages=2"))
    compare("wgrad, 4 buffers against 2 (calls 167-168; new = 4)", four, wg)
    compare("wgrad, 16 channels: planes (call 168; new) against whole rows",
            rows(HERE / "call168_wgrad_rows16_planar.csv.gz"), wg[wg.config.str.contains(
                "BLOCK_N=16;")])
    compare("wgrad, 32 channels: planes (call 168) against whole rows",
            wg[wg.config.str.contains("BLOCK_N=32;")],
            rows(HERE / "wgrad_rows32_unplanar.csv.gz"))
    compare("dgrad twin, 32 channels: planes (call 169) against whole rows",
            family_rows("bwd_dgrad", "dgrad_grouped_flat", 32),
            rows(HERE / "dgrad_rows32_unplanar.csv.gz"))
    for sweep in ("train", "holdout"):
        compare(f"forward {sweep}, 32 channels: planes (call 169) against whole rows",
                family_rows(sweep, "grouped_flat", 32),
                rows(HERE / f"{sweep}_rows32_unplanar.csv.gz"))


if __name__ == "__main__":
    ncu_summary()
    sweeps()
