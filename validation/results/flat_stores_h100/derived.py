"""derived.md from this folder's files and the sweep CSVs.

    python3 validation/results/flat_stores_h100/derived.py

The rows the re-sweeps replaced were set aside with ``convdispatch retire`` and are kept
here (``retired_*.csv.gz``); the new rows are in ``data/sweeps/h100/``.
"""

from __future__ import annotations

import csv
import gzip
import math
from pathlib import Path

from convdispatch.validation.bench_layers import (
    backward_run_lines,
    category_pair_lines,
    layer_pair_lines,
    rerun_lines,
)
from convdispatch.validation.report import geomean

HERE = Path(__file__).parent
SWEEPS = HERE.parents[2] / "data" / "sweeps" / "h100"
# (sweep CSV, family, retired rows): the forward plans and the dgrad twin.
RESWEPT = (("train.csv", "grouped_flat", "retired_train.csv.gz"),
           ("holdout.csv", "grouped_flat", "retired_holdout.csv.gz"),
           ("bwd_dgrad.csv", "dgrad_grouped_flat", "retired_bwd_dgrad.csv.gz"))
# The suite before (model 1399ea6eb29c, call 257) and after (model 418054e8587d, call 263).
BEFORE = HERE.parent / "tap_steps_h100" / "call257"
AFTER = HERE / "call263"
PEAK_TFLOPS = 790.0  # the suites' measured bf16 matrix peak, rounded down (bench.md)


def read(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as f:
        return list(csv.DictReader(f))


def by_key(rows: list[dict]) -> dict[tuple[str, str], float]:
    return {(r["problem_id"], r["config"]): float(r["latency_us"]) for r in rows
            if r["ok"] == "1"}


def best(rows: dict[tuple[str, str], float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for (pid, _), t in rows.items():
        out[pid] = min(out.get(pid, math.inf), t)
    return out


def sweep_table() -> list[str]:
    out = ["## The rows measured again (call 262, the dgrad rest in call 263)", "",
           "Old: the rows with 4-byte stores from the mma layout (retired); new: 16-byte "
           "stores from the copy layout. Same configs, same problems.", "",
           "| sweep | family | configs | old / new latency, per config (geomean) | range | "
           "problems | best config of a problem, old / new | range |",
           "|---|---|---|---|---|---|---|---|"]
    detail = []
    for csv_name, family, retired in RESWEPT:
        new = by_key([r for r in read(SWEEPS / csv_name) if r["family"] == family])
        old = by_key(read(HERE / retired))
        same = sorted(set(old) & set(new))
        per = [old[k] / new[k] for k in same]
        bo, bn = best({k: old[k] for k in same}), best({k: new[k] for k in same})
        per_problem = {p: bo[p] / bn[p] for p in bo}
        out.append(f"| {csv_name} | {family} | {len(same)} | {geomean(per):.3f} | "
                   f"{min(per):.2f}-{max(per):.2f} | {len(bo)} | "
                   f"{geomean(list(per_problem.values())):.3f} | "
                   f"{min(per_problem.values()):.2f}-{max(per_problem.values()):.2f} |")
        detail += [f"| {csv_name} | {p} | {bo[p]:.2f} | {bn[p]:.2f} | {per_problem[p]:.3f} |"
                   for p in sorted(per_problem)
                   if "resnext50_32x4d" in p and "/n32/" in p or p.startswith("video3d")]
    return out + ["", "ResNeXt-50 at batch 32 and ResNeXt3D-50: the family's fastest row.", "",
                  "| sweep | problem | old (us) | new (us) | old / new |",
                  "|---|---|---|---|---|"] + detail


def suite_table() -> list[str]:
    out = ["## The issue-6 suite: model 1399ea6eb29c (call 257) and 418054e8587d (call 263)",
           "", "Same harness (three rounds a side, CUDA-graph replays, L2 flushed), each "
           "suite whole in one run. Our time and cuDNN's before / after: the geomean of the "
           "layers' before / after latency.", "",
           "| dtype | category | layers | x cuDNN before | after | min after | "
           "our time before / after | cuDNN's before / after | choices changed |",
           "|---|---|---|---|---|---|---|---|---|"]
    tables = []
    for dtype, short in (("float16", "fp16"), ("bfloat16", "bf16")):
        old = {r["problem_id"]: r for r in read(BEFORE / f"issue6_{short}" / "bench.csv")}
        new = read(AFTER / f"issue6_{short}" / "bench.csv")
        out += category_pair_lines(old, new, dtype)
        top = max(new, key=lambda r: float(r["tflops"]))
        out.append(f"| {dtype} | top rate | | | {float(top['tflops']):.0f} TFLOP/s "
                   f"({float(top['tflops']) / PEAK_TFLOPS:.0%} of {PEAK_TFLOPS:.0f}) | | | | "
                   f"{top['problem_id']} |")
        tables += ["", f"Grouped layers, {dtype}: call 257 (before) and 263 (after).", ""]
        tables += layer_pair_lines(old, new, "grouped", "before", "after")
    return out + tables


def rerun_table() -> list[str]:
    """Call 266: the grouped layers again under the same model, against call 263."""
    runs = [(dtype, {r["problem_id"]: r for r in read(AFTER / f"issue6_{short}" / "bench.csv")},
             read(HERE / "call266" / f"grouped6_{short}" / "bench.csv"))
            for dtype, short in (("float16", "fp16"), ("bfloat16", "bf16"))]
    return ["## The grouped layers again (call 266)", ""] + rerun_lines("263", "266", runs)


def backward_table() -> list[str]:
    """Call 267: one backward pass of the grouped layers, twice, against call 225's four
    runs under the dgrad model before (``../backward_pass_h100/``)."""
    def full(path: Path) -> dict[str, dict]:
        return {r["problem_id"]: r for r in read(path / "bench.csv") if r["direction"] == "full"}

    new = [full(HERE / "call267" / f"bwd_full_grouped6_{i}") for i in (1, 2)]
    old = [full(HERE.parent / "backward_pass_h100" / "call225" / f"bwd_full_grouped6_{i}")
           for i in (6, 7, 8, 9)]
    return ["## One backward pass of the grouped layers (call 267)", "",
            backward_run_lines(new, old, "267", "225")]


def main() -> None:
    parts = [["# grouped_flat's 16-byte stores (derived by derived.py)"], sweep_table(),
             suite_table(), rerun_table(), backward_table()]
    (HERE / "derived.md").write_text("\n\n".join("\n".join(p) for p in parts) + "\n")


if __name__ == "__main__":
    main()
