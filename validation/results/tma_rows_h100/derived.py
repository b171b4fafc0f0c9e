"""derived.md from this folder's files:

    cd validation/results/tma_rows_h100 && python3 derived.py > derived.md

Reads the rows call 313 measured (``new_rows.csv.gz``: the rows of (problem, family,
config) keys the sweep CSVs lacked;
``retired_3d.csv.gz``: grouped_flat's 3D rows set aside before the call, and
``new_3d.csv.gz``: the same configs measured again), the sweep CSVs in data/sweeps/h100/
(as committed with this folder), and the issue-6 suite of call 314 (the retrained model)
against call 286's (``../flat_wgmma_h100/``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from convdispatch.validation.derived_tables import (
    GROUPED_SUITE,
    dims_of,
    forward_sweep_rows,
    heading,
    line,
    retired_pairs,
    suite_lines,
    summary,
    table_head,
)
from convdispatch.validation.row_compare import geomean

HERE = Path(__file__).parent
BEFORE = HERE.parent / "flat_wgmma_h100" / "call286"


def kind(config: str) -> str:
    """What a grouped_flat config added since the H100 rows of call 284 is."""
    if "BLOCK_N=64" in config:
        return "64-wide" + (" TMA" if "TMA=1" in config else "")
    if "TMA=1" in config:
        return "TMA"
    return "ITEMS=1" if "ITEMS=1;" in config else "other"


def new_row_lines() -> list[str]:
    new = pd.read_csv(HERE / "new_rows.csv.gz")
    new = new.assign(kind=new.config.map(kind), dims=dims_of(new.problem_id))
    out = heading("Rows call 313 added", "The rows of keys the two sweep CSVs lacked "
                  "(grouped_flat alone; the 3D rows measured again are in the next table).",
                  ["kind", "dims", "rows", "ok", "problems"])
    for (k, dims), g in new.groupby(["kind", "dims"]):
        out.append(line([k, dims, len(g), int((g.status == "ok").sum()),
                         g.problem_id.nunique()]))
    out.append(line(["all", "", len(new), int((new.status == "ok").sum()),
                     new.problem_id.nunique()]))
    return out + [""]


def again_lines() -> list[str]:
    """The 3D rows set aside against the same configs measured again."""
    m = retired_pairs(HERE, "3d")
    m["wgmma"] = m.config.str.contains("WGMMA=1")
    out = heading("grouped_flat's 3D rows measured again", f"{len(m)} configs: the rows "
                  "measured before the filter copies became cp.async (and the 32-wide WGMMA "
                  "tiles diagonal blocks) against call 313's.",
                  ["tile", "block_n", "old / new (geomean)", "rows", "min", "max"])
    for (wg, bn), g in [*m.groupby(["wgmma", "block_n"]), (("all", ""), m)]:
        name = "" if wg == "all" else ("WGMMA" if wg else "mma.sync")
        out.append(line([name or "all", bn, *summary(g.x)]))
    best = m.groupby("problem_id")[["latency_us_old", "latency_us_new"]].min()
    bx = best.latency_us_old / best.latency_us_new
    return out + ["", f"The family's best of these a problem, old / new: {geomean(bx):.3f}x "
                  f"over {len(bx)} problems (min {bx.min():.3f}, max {bx.max():.3f}).", ""]


def tma_twin_lines(d: pd.DataFrame) -> list[str]:
    """Each TMA config against its cp.async twin (the same config without TMA=1)."""
    flat = d[d.family == "grouped_flat"]
    tma = flat[flat.config.str.contains("TMA=1")].assign(
        twin=lambda x: x.config.str.replace(";TMA=1", "", regex=False))
    m = tma.merge(flat, left_on=["problem_id", "twin"], right_on=["problem_id", "config"],
                  suffixes=("_tma", "_async"))
    m["x"] = m.latency_us_async / m.latency_us_tma
    m["dims"] = dims_of(m.problem_id)
    out = heading("TMA against the cp.async twin, config by config", f"{len(m)} pairs. 2D "
                  "twins are rows measured before the filter copies became cp.async (1.04x "
                  "a config on 2D layers on an H200); 3D twins were measured again in call "
                  "313.", ["dims", "cp.async / TMA (geomean)", "pairs", "min", "max",
                           "TMA faster", "TMA slower by over 3%"])
    for dims, g in [*m.groupby("dims"), ("all", m)]:
        out.append(line([dims, *summary(g.x), f"{(g.x > 1).mean():.0%}",
                         f"{(g.x < 1 / 1.03).mean():.0%}"]))
    return out + [""]


def best_lines(d: pd.DataFrame) -> list[str]:
    """The best row of any family a problem, without the configs added since call 284
    and with them, over the problems that have such rows."""
    flat = d.family.eq("grouped_flat")
    added = flat & d.config.map(kind).ne("other")
    probs = d[added].problem_id.unique()
    d, added = d[d.problem_id.isin(probs)], added[d.problem_id.isin(probs)]
    before = d[~added].groupby("problem_id").latency_us.min()
    after = d.groupby("problem_id").latency_us.min()
    cudnn = d.groupby("problem_id").cudnn_us.median()
    fastest = d.loc[d.groupby("problem_id").latency_us.idxmin()].set_index("problem_id")
    out = heading("The best row a problem, without and with the added configs", "",
                  ["problems", "count", "without / with", "an added config fastest on",
                   "cuDNN / best, without", "with"])
    suite = [p for p in probs if p.startswith(GROUPED_SUITE)]
    for name, ids in (("all with added rows", probs), ("issue-6 grouped layers", suite)):
        ids = list(ids)
        out.append(line([name, len(ids), f"{geomean(before[ids] / after[ids]):.3f}",
                         int((after[ids] < before[ids]).sum()),
                         f"{geomean(cudnn[ids] / before[ids]):.3f}",
                         f"{geomean(cudnn[ids] / after[ids]):.3f}"]))
    out += ["", *table_head(["issue-6 grouped layer", "without (us)", "with (us)",
                             "fastest", "cuDNN (us)"])]
    for p in sorted(p for p in probs if p.startswith(GROUPED_SUITE)):
        f = fastest.loc[p]
        out.append(line([p, f"{before[p]:.1f}", f"{after[p]:.1f}",
                         f"{f.family} {f.config}", f"{cudnn[p]:.1f}"]))
    return out + [""]


def choice_lines(d: pd.DataFrame) -> list[str]:
    """Call 314's float16 grouped choices against the sweep: the chosen config's row over
    the problem's best row of any family (the suite's problems are the sweep's)."""
    suite = pd.read_csv(HERE / "call314" / "issue6_fp16" / "bench.csv")
    suite = suite[suite.category == "grouped"]
    rows = d.set_index(["problem_id", "family", "config"]).latency_us
    best = d.groupby("problem_id").latency_us.min()
    out = heading("Call 314's grouped choices against the sweep's best row (float16)", "",
                  ["layer", "chosen row (us)", "best row (us)", "chosen / best"])
    ratios = []
    for r in suite.itertuples():
        fam, cfg = r.chosen.split(":", 1)
        us = rows[(r.problem_id, fam, cfg)]
        ratios.append(us / best[r.problem_id])
        out.append(line([r.problem_id, f"{us:.1f}", f"{best[r.problem_id]:.1f}",
                         f"{ratios[-1]:.3f}"]))
    x = pd.Series(ratios)
    return out + ["", f"Geomean {geomean(x):.3f}, max {x.max():.3f} over {len(x)} layers.", ""]


def rerun_lines() -> list[str]:
    """Call 315's grouped layers (the same choices, run again alone) against call 314's
    suite run: each side's time, and the ratio from each side's lower time of the two."""
    out = heading("The grouped layers run twice (calls 314 and 315)", "Same model and "
                  "choices; x cuDNN a run, then from each side's lower time of the two runs.",
                  ["dtype", "same choices", "call 314", "call 315", "ours 314 / 315",
                   "cuDNN 314 / 315", "lower times"])
    for dtype, short in (("float16", "fp16"), ("bfloat16", "bf16")):
        a = pd.read_csv(HERE / "call314" / f"issue6_{short}" / "bench.csv")
        a = a[a.category == "grouped"].set_index("problem_id")
        b = pd.read_csv(HERE / "call315" / f"grouped_{short}" / "bench.csv").set_index(
            "problem_id").loc[a.index]
        lower = (pd.concat([a.cudnn_us, b.cudnn_us], axis=1).min(axis=1)
                 / pd.concat([a.call_us, b.call_us], axis=1).min(axis=1))
        out.append(line([dtype, bool((a.chosen == b.chosen).all()),
                         f"{geomean(a.cudnn_us / a.call_us):.3f}",
                         f"{geomean(b.cudnn_us / b.call_us):.3f}",
                         f"{geomean(a.call_us / b.call_us):.3f}",
                         f"{geomean(a.cudnn_us / b.cudnn_us):.3f}", f"{geomean(lower):.3f}"]))
    return out + [""]


def main() -> None:
    lines = ["# grouped_flat's TMA, 64-wide and one-item rows on the H100: derived tables", "",
             "Made by `derived.py` from this folder's files.", ""]
    lines += new_row_lines()
    lines += again_lines()
    d = forward_sweep_rows()
    lines += tma_twin_lines(d)
    lines += best_lines(d)
    if (HERE / "call314").exists():
        lines += choice_lines(d)
        lines += rerun_lines()
        lines += suite_lines(BEFORE, HERE / "call314", "The issue-6 suite: call 314 (the "
                             "retrained model) against call 286", ("call 286", "call 314"))
    print("\n".join(lines).rstrip())


if __name__ == "__main__":
    main()
