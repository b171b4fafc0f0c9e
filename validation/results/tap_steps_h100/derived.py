"""derived.md from the forward sweep CSVs, this folder's suite runs and the thirty-ninth
session's (``../flat_fill_h100/``).

    python3 validation/results/tap_steps_h100/derived.py
"""

from __future__ import annotations

import csv
import gzip
import math
from pathlib import Path

from convdispatch.kernels.grouped_packed import PACKED_TAP_TILES, GroupedPackedFamily
from convdispatch.validation.bench_layers import (
    category_pair_lines,
    layer_pair_lines,
    rerun_lines,
)
from convdispatch.validation.report import geomean

HERE = Path(__file__).parent
SWEEPS = HERE.parents[2] / "data" / "sweeps" / "h100"
# Model 605e1d186d09 (before): each dtype's suite whole in one run (calls 253, 254).
BEFORE = {"float16": HERE.parent / "flat_fill_h100" / "call253" / "issue6_fp16",
          "bfloat16": HERE.parent / "flat_fill_h100" / "call254" / "issue6_bf16"}
AFTER = {"float16": HERE / "call257" / "issue6_fp16",
         "bfloat16": HERE / "call257" / "issue6_bf16"}
PEAK_TFLOPS = 790.0  # the suites' measured bf16 matrix peak, rounded down (bench.md)


def config_id(cfg) -> str:
    return ";".join(f"{k}={v}" for k, v in sorted(cfg.items()))


TAP = {config_id(c) for c in GroupedPackedFamily.tap_step_configs}
# The deeper pipelines, swept in call 256 (the rest in call 255).
DEEP = {config_id(c) for c in GroupedPackedFamily.tap_step_configs[-5:]}
assert len(PACKED_TAP_TILES) == len(TAP)


def read(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def sweep_rows() -> dict[str, list[dict]]:
    """Grouped (not depthwise) problems' ok rows of both plans, by problem."""
    out: dict[str, list[dict]] = {}
    for plan in ("train", "holdout"):
        for r in read(SWEEPS / f"{plan}.csv"):
            if r["ok"] == "1" and 1 < int(r["g"]) < int(r["c"]):
                out.setdefault(r["problem_id"], []).append(r)
    return out


def is_tap(r: dict) -> bool:
    return r["family"] == "grouped_packed" and r["config"] in TAP


def sweep_table() -> list[str]:
    probs = {p: rs for p, rs in sweep_rows().items() if any(is_tap(r) for r in rs)}
    gains, deep_gains, faster, per_set = [], [], 0, {}
    detail = []
    for pid, rs in sorted(probs.items()):
        old = min(float(r["latency_us"]) for r in rs if not is_tap(r))
        tap = min(rs, key=lambda r: float(r["latency_us"]) if is_tap(r) else math.inf)
        shallow = min(float(r["latency_us"]) for r in rs if is_tap(r) and r["config"] not in DEEP)
        t = float(tap["latency_us"])
        gains.append(max(old / t, 1.0))
        deep_gains.append(max(shallow / t, 1.0))
        faster += t < old
        per_set.setdefault(rs[0]["set"], []).append(max(old / t, 1.0))
        if rs[0]["set"] in ("resnext50_32x4d", "video3d") and "conv2" in pid:
            detail.append(f"| {pid} | {float(rs[0]['cudnn_us']):.1f} | {old:.2f} | {t:.2f} | "
                          f"{old / t:.2f} | {tap['config']} |")
    out = ["## The tap steps swept (calls 255, 256)", "",
           f"Grouped problems of both plans where a tap-step config is offered: {len(probs)}. "
           f"The fastest tap-step row is faster than every other row of the problem (all "
           f"families) on {faster}; the fastest row a problem is "
           f"{geomean(gains):.3f}x faster with them (geomean, 1 where they lose). Of that, "
           f"the deeper pipelines of call 256 against the tap steps of call 255 alone: "
           f"{geomean(deep_gains):.3f}x.", "",
           "| set | problems | fastest row, with / without tap steps (geomean) |",
           "|---|---|---|"]
    out += [f"| {s} | {len(g)} | {geomean(g):.3f} |" for s, g in sorted(per_set.items())]
    out += ["", "ResNeXt-50 and ResNeXt3D-50 grouped layers (cuDNN: the sweep's own timing):",
            "", "| problem | cuDNN (us) | fastest other row (us) | fastest tap step (us) | "
            "ratio | its config |", "|---|---|---|---|---|---|"] + detail
    return out


def suite_table() -> list[str]:
    out = ["## The issue-6 suite: model 605e1d186d09 (calls 253, 254) and the retrained "
           "model (call 257)", "",
           "Same harness (three rounds a side, CUDA-graph replays), each suite whole in one "
           "run. Our time before / after: the geomean of the layers' before / after latency.",
           "", "| dtype | category | layers | x cuDNN before | after | min after | "
           "our time before / after | cuDNN's before / after | choices changed |",
           "|---|---|---|---|---|---|---|---|---|"]
    tables = []
    for dtype in ("float16", "bfloat16"):
        if not (AFTER[dtype] / "bench.csv").exists():
            continue
        old = {r["problem_id"]: r for r in read(BEFORE[dtype] / "bench.csv")}
        new = read(AFTER[dtype] / "bench.csv")
        out += category_pair_lines(old, new, dtype)
        top = max(new, key=lambda r: float(r["tflops"]))
        out.append(f"| {dtype} | top rate | | | {float(top['tflops']):.0f} TFLOP/s "
                   f"({float(top['tflops']) / PEAK_TFLOPS:.0%} of {PEAK_TFLOPS:.0f}) | | | | "
                   f"{top['problem_id']} |")
        tables += ["", f"Grouped layers, {dtype}: calls {'253' if dtype == 'float16' else '254'}"
                   " (before) and 257 (after).", ""]
        tables += layer_pair_lines(old, new, "grouped", "before", "after")
    return out + tables


def rerun_table() -> list[str]:
    """Call 258: the grouped layers again under the same model, against call 257."""
    runs = [(dtype, {r["problem_id"]: r for r in read(AFTER[dtype] / "bench.csv")
                     if r["category"] == "grouped"},
             read(HERE / "call258" / f"grouped6_{short}" / "bench.csv"))
            for dtype, short in (("float16", "fp16"), ("bfloat16", "bf16"))]
    return ["## The grouped layers again (call 258)", ""] + rerun_lines("257", "258", runs)


def split_table() -> list[str]:
    """Call 260 (not kept): tap steps split in 2 or 3 runs, against every other row."""
    rows = sweep_rows()
    split: dict[str, list[dict]] = {}
    for plan in ("train", "holdout"):
        with gzip.open(HERE / "call260" / f"tap_split_rows_{plan}.csv.gz", "rt") as f:
            for r in csv.DictReader(f):
                split.setdefault(r["problem_id"], []).append(r)
    gains, faster = [], []
    for pid, rs in sorted(split.items()):
        old = min(float(r["latency_us"]) for r in rows[pid])
        new = min(float(r["latency_us"]) for r in rs)
        gains.append(max(old / new, 1.0))
        if new < old:
            faster.append(f"{pid} ({old:.2f} -> {new:.2f} us)")
    n = sum(len(rs) for rs in split.values())
    return ["## Tap steps split in 2 or 3 runs (call 260, not kept)", "",
            f"{n} rows on {len(split)} problems, all ok. Faster than every other row on "
            f"{len(faster)}: {'; '.join(faster)}. The fastest row a problem: "
            f"{geomean(gains):.4f}x (geomean, 1 where they lose)."]


def main() -> None:
    parts = [["# grouped_packed's tap steps (derived by derived.py)"], sweep_table(),
             suite_table(), rerun_table(), split_table()]
    (HERE / "derived.md").write_text("\n\n".join("\n".join(p) for p in parts) + "\n")


if __name__ == "__main__":
    main()
