"""derived.md from this folder's files:

    cd validation/results/flat_wgmma_h100 && python3 derived.py > derived.md

Reads the shifted-view probe of call 282 (``call282/wgmma_shift.log``); the WGMMA rows of
calls 283 (``call283/wgmma_*.csv.gz``) and 284 (32-wide tiles for groups of 16 channels
or fewer, ``call284/wide_*.csv.gz``; four buffers, not kept, ``call284/four_buffers_*``)
against the rows of the sweep CSVs in data/sweeps/h100/ (as committed with this folder)
that are not WGMMA; and the issue-6 suite of call 286 against call 279's
(``../flat_filter_vectors_h100/``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from convdispatch.validation.derived_tables import (
    GROUPED_SUITE,
    dims_of,
    forward_sweep_rows,
    heading,
    line,
    suite_lines,
    summary,
    table_head,
)
from convdispatch.validation.row_compare import geomean

HERE = Path(__file__).parent
BEFORE = HERE.parent / "flat_filter_vectors_h100" / "call279"
KEY = ["problem_id", "config"]


def shift_probe() -> list[str]:
    """Call 282: the largest relative error over row shifts 0..39, per row width and
    swizzle."""
    errs: dict[tuple[int, int], list[float]] = {}
    for m in re.finditer(r"block (\d+) swizzle (\d+) shift \d+: rel err (\S+)",
                         (HERE / "call282" / "wgmma_shift.log").read_text()):
        errs.setdefault((int(m[1]), int(m[2])), []).append(float(m[3]))
    out = heading("Call 282: wgmma on row-shifted views of a swizzled buffer",
                  "A [256, C] buffer stored once; wgmma reads the [64, C] view from each row "
                  "0..39 (float16, against float32).",
                  ["channels a row", "swizzle (bytes)", "shifts", "largest rel err"])
    for (block, sw), e in errs.items():
        out.append(line([block, sw, len(e), f"{max(e):.1e}"]))
    return out + [""]


def sweep_rows() -> pd.DataFrame:
    """The committed sweeps' ok rows (both plans) with wgmma, wide (a 32-wide WGMMA tile
    for groups that fit 16) and block_n columns."""
    d = forward_sweep_rows()
    d["wgmma"] = d.config.str.contains("WGMMA=1")
    d["block_n"] = d.config.str.extract(r"BLOCK_N=(\d+)")[0].astype(float)
    d["wide"] = d.wgmma & (d.block_n == 32) & (d.c // d.g <= 16) & (d.k // d.g <= 16)
    return d


def same_config_lines(d: pd.DataFrame) -> list[str]:
    """WGMMA against the mma.sync tile of the same BLOCK_M, BLOCK_N, num_warps and ITEMS."""
    flat = d[d.family == "grouped_flat"].assign(tile=lambda x: x.config.str.replace(
        ";WGMMA=1", "", regex=False))
    m = flat[~flat.wgmma].merge(flat[flat.wgmma], on=["problem_id", "tile"],
                                suffixes=("_old", "_new"))
    m["x"] = m.latency_us_old / m.latency_us_new
    m["dims"] = dims_of(m.problem_id)
    m["warps"] = m.tile.str.extract(r"num_warps=(\d)")[0]
    out = heading("WGMMA against mma.sync, the same tile", f"{len(m)} (problem, config) "
                  "pairs of both sweeps (mma.sync rows as swept before; WGMMA rows: calls "
                  "283-284).", ["dims", "block_n", "warps", "mma.sync / WGMMA (geomean)",
                                "pairs", "min", "max"])
    for (dims, bn, warps), g in [*m.groupby(["dims", "block_n_new", "warps"]),
                                 (("all", "", ""), m)]:
        out.append(line([dims, "" if bn == "" else int(bn), warps, *summary(g.x)]))
    return out + [""]


def best_lines(d: pd.DataFrame) -> list[str]:
    """Each problem with WGMMA rows: the best row of any family before (no WGMMA row), with
    the WGMMA tiles of call 283, and with call 284's 32-wide ones too."""
    probs = d[d.wgmma].problem_id.unique()
    d = d[d.problem_id.isin(probs)]
    before = d[~d.wgmma].groupby("problem_id").latency_us.min()
    narrow = d[~d.wide].groupby("problem_id").latency_us.min()
    after = d.groupby("problem_id").latency_us.min()
    cudnn = d.groupby("problem_id").cudnn_us.median()
    out = heading("The best row a problem, before and after the WGMMA tiles", "",
                  ["problems", "rows", "before / with call 283's tiles", "before / with both",
                   "WGMMA fastest on", "cuDNN / best, before", "after"])
    for name, ids in (("all", probs),
                      ("issue-6 sets, float16", [p for p in probs if p.startswith(GROUPED_SUITE)
                                                 and p.endswith("/float16")])):
        out.append(line([name, len(ids), f"{geomean(before[ids] / narrow[ids]):.3f}",
                         f"{geomean(before[ids] / after[ids]):.3f}",
                         int((after[ids] < before[ids]).sum()),
                         f"{geomean(cudnn[ids] / before[ids]):.3f}",
                         f"{geomean(cudnn[ids] / after[ids]):.3f}"]))
    out += ["", *table_head(["problem (float16)", "before (us)", "with WGMMA (us)",
                             "cuDNN (us)"])]
    for p in sorted(p for p in probs if p.startswith(GROUPED_SUITE) and p.endswith("/float16")):
        out.append(line([p, f"{before[p]:.1f}", f"{after[p]:.1f}", f"{cudnn[p]:.1f}"]))
    return out + [""]


def four_buffer_lines() -> list[str]:
    """Call 284's four-buffer rows (not kept) against the same WGMMA tile with two."""
    deep = pd.concat(pd.read_csv(HERE / "call284" / f"four_buffers_{plan}.csv.gz")
                     for plan in ("train", "holdout"))
    two = pd.concat([pd.read_csv(HERE / "call283" / f"wgmma_{plan}.csv.gz")
                     for plan in ("train", "holdout")]
                    + [pd.read_csv(HERE / "call284" / f"wide_{plan}.csv.gz")
                       for plan in ("train", "holdout")])
    deep["tile"] = deep.config.str.replace("num_stages=3", "num_stages=1", regex=False)
    m = deep.merge(two, left_on=["problem_id", "tile"], right_on=KEY,
                   suffixes=("_four", "_two"))
    m["x"] = m.latency_us_two / m.latency_us_four
    m["dims"] = dims_of(m.problem_id)
    best = m.groupby("problem_id")[["latency_us_two", "latency_us_four"]].min()
    bx = best.latency_us_two / best.latency_us_four
    out = heading("Call 284: four buffers (three steps' copies in flight), not kept",
                  f"{len(deep)} rows, all {', '.join(deep.status.unique())}; against the same "
                  "WGMMA tile with two buffers.", ["dims", "two / four (geomean)", "pairs",
                                                   "min", "max"])
    for dims, g in [*m.groupby("dims"), ("all", m)]:
        out.append(line([dims, *summary(g.x)]))
    return out + ["", f"Among these tiles, the best a problem: two / four {geomean(bx):.3f} "
                  f"over {len(bx)} problems (four faster on {int((bx > 1.01).sum())}).", ""]


def rerun_lines() -> list[str]:
    """Call 286's second run of the grouped layers alone, against its whole-suite run."""
    out = heading("Call 286: the grouped layers run again", "The 21 grouped layers alone "
                  "after the whole suite, same model.", ["dtype", "x cuDNN, suite run",
                                                         "again", "min again"])
    for dtype, short in (("float16", "fp16"), ("bfloat16", "bf16")):
        full = pd.read_csv(HERE / "call286" / f"issue6_{short}" / "bench.csv")
        again = pd.read_csv(HERE / "call286" / f"grouped_{short}" / "bench.csv")
        full = full[full.category == "grouped"]
        out.append(line([dtype, f"{geomean(full.speedup_vs_cudnn):.3f}",
                         f"{geomean(again.speedup_vs_cudnn):.3f}",
                         f"{again.speedup_vs_cudnn.min():.2f}"]))
    return out + [""]


def main() -> None:
    lines = ["# grouped_flat's WGMMA tiles: derived tables", "",
             "Made by `derived.py` from this folder's files.", ""]
    lines += shift_probe()
    d = sweep_rows()
    lines += same_config_lines(d)
    lines += best_lines(d)
    lines += four_buffer_lines()
    if (HERE / "call286").exists():
        lines += suite_lines(BEFORE, HERE / "call286", "The issue-6 suite: call 286 against "
                             "call 279", ("call 279", "call 286"))
        lines += rerun_lines()
    print("\n".join(lines).rstrip())


if __name__ == "__main__":
    main()
