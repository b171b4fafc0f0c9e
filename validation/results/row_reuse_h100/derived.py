"""derived.md from this folder's rows (call 268) and the suite (call 269):

    cd validation/results/row_reuse_h100 && python3 derived.py > derived.md

Reads the retired rows and call 268's new rows in this folder, and the issue-6 suite of
call 269 here against call 263's (flat_stores_h100).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from convdispatch.kernels.base import Config
from convdispatch.kernels.dead_taps import trim_dead_taps
from convdispatch.kernels.dgrad_forward import ForwardDgradFamily
from convdispatch.kernels.flat_grid import flat_consts, reuse_loads
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.validation.bench_layers import (
    backward_run_lines,
    rerun_lines,
)
from convdispatch.validation.derived_tables import DTYPES, bench_rows, full_pass, suite_lines
from convdispatch.validation.row_compare import geomean
from convdispatch.validation.sweep_csv import runs_row_reuse

HERE = Path(__file__).parent
KEY = ["problem_id", "family", "config"]


def ran_268(geom, cfg) -> bool:
    """The rule call 268 ran: any tile, stride or rounding, where the rounded grid holds a
    row and the schedule loads at most 1 / 1.2 of the runs a plane."""
    positions = cfg["BLOCK_M"]
    without, with_reuse = reuse_loads(geom, positions, cfg["num_warps"])
    return (flat_consts(geom, positions, reuse=True)["WP"] <= positions
            and without >= 1.2 * with_reuse)


def pairs(name: str) -> pd.DataFrame:
    """Retired and new rows of the same configs, both ok, with what call 268's rule
    (``ran_268``) and the kept rule (``runs_row_reuse``) say of each. A dgrad twin row's
    launch runs one forward problem a stride phase of dX: it ran the schedule if any of
    them did; its gain and rows are those of the ones that did (else of the first)."""
    old = pd.read_csv(HERE / f"retired_{name}.csv.gz")
    new = pd.read_csv(HERE / f"new_{name}.csv.gz")
    both = old.merge(new[KEY + ["ok", "latency_us"]], on=KEY, suffixes=("_old", "_new"))
    both = both[(both.ok_old == 1) & (both.ok_new == 1)].reset_index(drop=True)
    facts = []
    for row in both.to_dict("records"):
        geom, cfg = ConvGeometry.from_row(row), Config.parse(row["config"])
        runs = (ForwardDgradFamily.problems(geom) if row["family"] == "dgrad_grouped_flat"
                else [trim_dead_taps(geom)])
        ran = [p for p in runs if ran_268(p, cfg)] or runs[:1]
        positions, nw = cfg["BLOCK_M"], cfg["num_warps"]
        gains = [reuse_loads(p, positions, nw) for p in ran]
        facts.append(dict(
            gain=round(max(w / r for w, r in gains), 2), block_n=cfg["BLOCK_N"],
            stride=geom.stride[1],
            rows_kept=all(flat_consts(p, positions, reuse=True)["ROWS"]
                          == flat_consts(p, positions)["ROWS"] for p in ran),
            ran_268=any(ran_268(p, cfg) for p in runs), kept=runs_row_reuse(row)))
    out = pd.concat([both, pd.DataFrame(facts)], axis=1)
    out["ratio"] = out.latency_us_old / out.latency_us_new
    return out


def table(df: pd.DataFrame, by: list[str]) -> str:
    g = df.groupby(by).ratio.agg([geomean, "count", "min", "max"]).reset_index()
    head = "| " + " | ".join(by) + " | old / new (geomean) | rows | min | max |"
    lines = [head, "|" + "---|" * (len(by) + 4)]
    for r in g.itertuples(index=False):
        cells = [str(v) for v in r[:len(by)]]
        lines.append("| " + " | ".join(cells) + f" | {r[-4]:.3f} | {r[-3]} | {r[-2]:.2f} | "
                     f"{r[-1]:.2f} |")
    return "\n".join(lines)


def best_lines(df: pd.DataFrame) -> list[str]:
    """Per problem, the best of the retired configs before and under the kept rule (a new
    row where it runs the schedule, else the retired row)."""
    now = np.where(df.kept, df.latency_us_new, df.latency_us_old)
    best = pd.DataFrame(dict(problem_id=df.problem_id, old=df.latency_us_old, now=now))
    best = best.groupby("problem_id").min()
    r = best.old / best.now
    lines = [f"best of these configs a problem, before / under the kept rule: {geomean(r):.3f}x "
             f"over {len(r)} problems (faster on {(r > 1.005).sum()}, slower on "
             f"{(r < 0.995).sum()}, min {r.min():.3f}, max {r.max():.3f})"]
    show = best[best.index.str.contains("resnext50_32x4d|resnext3d_50.layer1.0")]
    if len(show):
        lines += ["", "| problem | before (us) | now (us) |", "|---|---|---|"]
        lines += [f"| {p} | {o:.1f} | {n:.1f} |" for p, o, n in show.itertuples()]
    return lines


def main() -> None:
    print("# Row reuse: derived tables\n")
    print("Made by `derived.py` from this folder's files.\n")
    for name, label in (("train", "forward, train plan"), ("holdout", "forward, holdout plan"),
                        ("bwd_dgrad", "dgrad twin")):
        df = pairs(name)
        print(f"## {label}: {len(df)} configs measured again\n")
        ran = df[df.ran_268]
        print("Configs call 268 ran with the schedule, by what the kept rule needs:\n")
        print(table(ran, ["stride", "block_n", "rows_kept"]) + "\n")
        print(table(ran[(ran.stride == 1) & (ran.block_n == 16) & ran.rows_kept], ["gain"])
              + "\n")
        print("By the kept rule (False: configs it leaves without the schedule; their rows "
              "go back to the retired ones):\n")
        print(table(df, ["kept"]) + "\n")
        if (~df.ran_268).any():
            print(f"Without the schedule in call 268 too (the same kernel measured again): "
                  f"{geomean(df.ratio[~df.ran_268]):.3f}x over {(~df.ran_268).sum()} rows\n")
        print("\n".join(best_lines(df)) + "\n")
    before = HERE.parent / "flat_stores_h100" / "call263"
    after = HERE / "call269"
    if (after / "issue6_fp16" / "bench.csv").exists():
        print("\n".join(suite_lines(before, after, "Issue-6 suite: call 263 (model "
                                     "418054e8587d) against call 269 (this session's model)",
                                     ("call 263", "call 269"))))
    again = HERE / "call270"
    if (again / "grouped6_fp16" / "bench.csv").exists():
        print("## The grouped layers again (call 270)\n")
        runs = [(dtype, {r["problem_id"]: r for r in bench_rows(after / f"issue6_{short}" /
                                                               "bench.csv")},
                 bench_rows(again / f"grouped6_{short}" / "bench.csv"))
                for dtype, short in DTYPES]
        print("\n".join(rerun_lines("269", "270", runs)) + "\n")
        print("## One backward pass of the grouped layers (calls 270 and 272, dgrad model "
              "30406f020844)\n")
        new = [full_pass(again / "bwd_full_grouped6")] + [
            full_pass(HERE / "call272" / f"bwd_full_grouped6_{i}") for i in (1, 2)]
        old = [full_pass(before.parent / "call267" / f"bwd_full_grouped6_{i}") for i in (1, 2)]
        print(backward_run_lines(new, old, "270/272", "267") + "\n")
        print("| layer | call 267 ours (us), two runs | calls 270, 272 ours (three runs) | "
              "in order, 267 / 270 | chosen (270) |")
        print("|---|---|---|---|---|")
        for pid, row in new[0].items():
            o1, o2 = (run[pid] for run in old)
            ours = ", ".join(f"{float(run[pid]['ours_us']):.1f}" for run in new)
            print(f"| {pid} | {float(o1['ours_us']):.1f}, {float(o2['ours_us']):.1f} | {ours} | "
                  f"{float(o1['in_order_us']):.1f} / {float(row['in_order_us']):.1f} | "
                  f"{row['chosen']} |")


if __name__ == "__main__":
    main()
