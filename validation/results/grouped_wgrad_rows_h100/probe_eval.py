"""What call 76's probe of ``wgrad_grouped_taps`` says, as markdown on stdout.

    python validation/results/grouped_wgrad_rows_h100/probe_eval.py > probe_eval.md

Part 1, the probe: it swept the family's widened config space (FILTER_ROWS 1/3, num_stages 1/2,
BLOCK_N 16/32, every tile and split) over ResNeXt-50's 28 grouped problems. ``old``: the
fastest config of the space as it was (one filter row, one stage, 32-channel packs).
Part 2: the gathered taps (L1_TAPS=1, call 78, ``gathered_taps_rows.csv.gz``) against the
family's shipped space (its rows in ``data/sweeps/h100/bwd_wgrad.csv``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
SWEEP = HERE.parents[2] / "data" / "sweeps" / "h100" / "bwd_wgrad.csv"


def knobs(rows: pd.DataFrame) -> pd.DataFrame:
    rows = rows[rows.ok.astype(bool)].copy()
    rows["fr"] = np.where(rows.config.str.contains("FILTER_ROWS=3"), 3, 1)
    rows["stages"] = rows.config.str.extract(r"num_stages=(\d)")[0].astype(int)
    rows["bn"] = rows.config.str.extract(r"BLOCK_N=(\d+)")[0].astype(int)
    return rows


def markdown(t: pd.DataFrame) -> str:
    """A frame as a markdown table (no tabulate dependency)."""
    cols = [t.index.name or ""] + [str(c) for c in t.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for idx, row in t.iterrows():
        cells = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join([str(idx)] + cells) + " |")
    return "\n".join(lines)


def geomean(s: pd.Series) -> float:
    return float(np.exp(np.log(s.dropna()).mean()))


def main() -> None:
    rows = knobs(pd.read_csv(HERE / "call76" / "taps.csv.gz"))
    best = rows.groupby("problem_id").latency_us.min()
    old = rows[(rows.fr == 1) & (rows.stages == 1) & (rows.bn == 32)]
    t = pd.DataFrame({"old us": old.groupby("problem_id").latency_us.min(), "best us": best,
                      "cuDNN us": rows.groupby("problem_id").cudnn_us.median()})
    for name, sel in (("FILTER_ROWS=3", rows.fr == 3), ("num_stages=2", rows.stages == 2),
                      ("BLOCK_N=16", rows.bn == 16)):
        t[f"best with {name}"] = rows[sel].groupby("problem_id").latency_us.min()
    t["best / old"] = t["old us"] / t["best us"]
    t["cuDNN / best"] = t["cuDNN us"] / t["best us"]
    t["cuDNN / old"] = t["cuDNN us"] / t["old us"]
    print(f"{len(rows)} rows, {rows.problem_id.nunique()} problems (all rows ok).\n")
    print("| knob | geomean best-with-knob / best of the problem |\n|---|---|")
    eff = best / 1.0
    for col, vals in (("fr", (1, 3)), ("stages", (1, 2)), ("bn", (16, 32))):
        for v in vals:
            sub = rows[rows[col] == v].groupby("problem_id").latency_us.min()
            print(f"| {col}={v} | {geomean(eff / sub):.3f} |")
    print(f"\ngeomean best / old: {geomean(t['best / old']):.3f}; cuDNN / best "
          f"{geomean(t['cuDNN / best']):.3f} (was {geomean(t['cuDNN / old']):.3f})\n")
    print(markdown(t))
    picks = rows.loc[rows.groupby("problem_id").latency_us.idxmin(), ["problem_id", "config"]]
    print("\nFastest config of each problem:\n")
    print(markdown(picks.set_index("problem_id")))

    gathered()


def gathered() -> None:
    halo = pd.read_csv(HERE / "gathered_taps_rows.csv.gz")
    rows = pd.read_csv(SWEEP)
    rows = rows[(rows.family == "wgrad_grouped_taps") & rows.ok.astype(bool)]
    t = pd.DataFrame({"shipped space us": rows.groupby("problem_id").latency_us.min(),
                      "gathered taps us": halo[halo.ok.astype(bool)]
                      .groupby("problem_id").latency_us.min()}).dropna()
    t["gathered / shipped speed"] = t["shipped space us"] / t["gathered taps us"]
    ratio = t["gathered / shipped speed"]
    print(f"\n## Gathered taps (call 78)\n\n{len(halo)} rows; over {len(t)} problems the "
          f"fastest gathered config runs at {geomean(ratio):.2f}x the speed of the shipped "
          f"space's fastest (geomean; min {ratio.min():.2f}, max {ratio.max():.2f}, faster on "
          f"{int((ratio > 1).sum())}).\n")
    print(markdown(t))


if __name__ == "__main__":
    main()
