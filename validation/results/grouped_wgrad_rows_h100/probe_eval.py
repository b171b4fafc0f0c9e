"""What call 76's probe of ``wgrad_grouped_taps`` says, as markdown on stdout.

    python validation/results/grouped_wgrad_rows_h100/probe_eval.py > probe_eval.md

Part 1, the probe: it swept the family's widened config space (FILTER_ROWS 1/3, num_stages 1/2,
BLOCK_N 16/32, every tile and split) over ResNeXt-50's 28 grouped problems. ``old``: the
fastest config of the space as it was (one filter row, one stage, 32-channel packs).
Part 2: the gathered taps (L1_TAPS=1, call 78, ``gathered_taps_rows.csv.gz``) against the
family's shipped space (its rows in ``data/sweeps/h100/bwd_wgrad.csv``). Part 3:
``wgrad_depthwise_rows`` at num_stages=2 (call 77, ``depthwise_rows_stages2.csv.gz``)
against its one-stage rows in the same CSV.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from convdispatch.kernels.base import Config
from convdispatch.validation.report import geomean
from convdispatch.validation.report_md import table
from convdispatch.validation.sweep_csv import sweep_provenance

HERE = Path(__file__).parent
SWEEP = HERE.parents[2] / "data" / "sweeps" / "h100" / "bwd_wgrad.csv"


def knobs(rows: pd.DataFrame) -> pd.DataFrame:
    rows = rows[rows.ok.astype(bool)].copy()
    cfgs = rows.config.map(Config.parse)
    rows["fr"] = cfgs.map(lambda c: c.get("FILTER_ROWS", 1))
    rows["stages"] = cfgs.map(lambda c: c["num_stages"])
    rows["bn"] = cfgs.map(lambda c: c["BLOCK_N"])
    return rows


def markdown(t: pd.DataFrame) -> str:
    """A frame, its index first, as a markdown table (floats to two decimals)."""
    rows = [[idx] + [f"{v:.2f}" if isinstance(v, float) else v for v in row]
            for idx, row in t.iterrows()]
    return "\n".join(table([t.index.name or ""] + list(t.columns), rows))


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
    print(f"{sweep_provenance(HERE / 'call76', ['taps'])}\n")
    print(f"{len(rows)} rows, {rows.problem_id.nunique()} problems (all rows ok).\n")
    knob_rows = []
    for col, vals in (("fr", (1, 3)), ("stages", (1, 2)), ("bn", (16, 32))):
        for v in vals:
            sub = rows[rows[col] == v].groupby("problem_id").latency_us.min()
            knob_rows.append([f"{col}={v}", f"{geomean(best / sub):.3f}"])
    print("\n".join(table(["knob", "geomean best-with-knob / best of the problem"],
                          knob_rows)))
    print(f"\ngeomean best / old: {geomean(t['best / old']):.3f}; cuDNN / best "
          f"{geomean(t['cuDNN / best']):.3f} (was {geomean(t['cuDNN / old']):.3f})\n")
    print(markdown(t))
    picks = rows.loc[rows.groupby("problem_id").latency_us.idxmin(), ["problem_id", "config"]]
    print("\nFastest config of each problem:\n")
    print(markdown(picks.set_index("problem_id")))

    sweep = pd.read_csv(SWEEP)
    gathered(sweep)
    depthwise_stages(sweep)


def family_best(rows: pd.DataFrame, family: str) -> pd.Series:
    """Fastest ok latency of ``family`` per problem."""
    rows = rows[(rows.family == family) & rows.ok.astype(bool)]
    return rows.groupby("problem_id").latency_us.min()


def depthwise_stages(sweep: pd.DataFrame) -> None:
    two = family_best(pd.read_csv(HERE / "depthwise_rows_stages2.csv.gz"), "wgrad_depthwise_rows")
    one = family_best(sweep, "wgrad_depthwise_rows")
    ratio = (one / two).dropna()
    print(f"\n## wgrad_depthwise_rows at num_stages=2 (call 77)\n\nOver {len(ratio)} problems "
          f"its fastest two-stage config runs at {geomean(ratio):.3f}x the speed of its "
          f"fastest one-stage config (geomean; min {ratio.min():.2f}, max {ratio.max():.2f}).")


def gathered(sweep: pd.DataFrame) -> None:
    halo = pd.read_csv(HERE / "gathered_taps_rows.csv.gz")
    t = pd.DataFrame({"shipped space us": family_best(sweep, "wgrad_grouped_taps"),
                      "gathered taps us": family_best(halo, "wgrad_grouped_taps")}).dropna()
    t["gathered / shipped speed"] = t["shipped space us"] / t["gathered taps us"]
    ratio = t["gathered / shipped speed"]
    print(f"\n## Gathered taps (call 78)\n\n{sweep_provenance(SWEEP.parent, ['bwd_wgrad'])}"
          f"\n\n{len(halo)} rows; over {len(t)} problems the "
          f"fastest gathered config runs at {geomean(ratio):.2f}x the speed of the shipped "
          f"space's fastest (geomean; min {ratio.min():.2f}, max {ratio.max():.2f}, faster on "
          f"{int((ratio > 1).sum())}).\n")
    print(markdown(t))


if __name__ == "__main__":
    main()
