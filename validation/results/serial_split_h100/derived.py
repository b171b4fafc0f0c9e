"""derived.md from this folder's call 227 files and call 207's issue-6 float16 run.

    python3 validation/results/serial_split_h100/derived.py
"""

from __future__ import annotations

import csv
from pathlib import Path

from convdispatch.validation.report import geomean

HERE = Path(__file__).parent
BENCH = HERE.parent / "flat3d_h100" / "call207" / "issue6_fp16" / "bench.csv"
HBM_TBPS = 3.35  # H100 SXM's HBM3 rate, the memory floor's divisor


def rows(path: Path) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))


def serial_table() -> list[str]:
    got = rows(HERE / "call227" / "serial.csv")
    out = ["## Serial split-K against the reduce pass (call 227, paired a, b, b, a)", "",
           "| layer | chosen config | reduce pass (us) | serial (us) | reduce pass / serial | "
           "same bits |", "|---|---|---|---|---|---|"]
    for r in got:
        a, s = float(r["reduce_pass_us"]), float(r["serial_us"])
        out.append(f"| {r['problem_id']} | {r['chosen']} | {a:.2f} | {s:.2f} | {a / s:.3f} | "
                   f"{r['same_bits']} |")
    out += ["", "| category | layers | geomean reduce pass / serial | serial faster on |",
            "|---|---|---|---|"]
    for cat in sorted({r["category"] for r in got}) + ["all"]:
        sel = [r for r in got if cat in ("all", r["category"])]
        ratios = [float(r["reduce_pass_us"]) / float(r["serial_us"]) for r in sel]
        out.append(f"| {cat} | {len(sel)} | {geomean(ratios):.3f} | "
                   f"{sum(x > 1 for x in ratios)} |")
    return out


def floor_table() -> list[str]:
    out = ["", "## What a launch costs in the harness (call 227, five rounds)", "",
           "| graph of | median (us) | min | max |", "|---|---|---|---|"]
    for r in rows(HERE / "call227" / "floor.csv"):
        out.append(f"| {r['case']} | {r['median_us']} | {r['min_us']} | {r['max_us']} |")
    return out


def bound_table() -> list[str]:
    one = float(next(r for r in rows(HERE / "call227" / "floor.csv")
                     if r["case"] == "one kernel, 256 programs")["median_us"])
    grouped = [r for r in rows(BENCH) if r["category"] == "grouped"]
    out = ["", "## The issue-6 grouped layers against 2x cuDNN (call 207, float16)", "",
           f"Floor: the larger of one launch in the harness ({one} us, above) and the "
           f"layer's least bytes at {HBM_TBPS} TB/s.", "",
           "| layer | cuDNN (us) | ours (us) | x cuDNN | cuDNN / 2 (us) | floor (us) | "
           "cuDNN / floor |", "|---|---|---|---|---|---|---|"]
    best = []
    for r in grouped:
        cud, ours = float(r["cudnn_us"]), float(r["call_us"])
        floor = max(one, float(r["min_bytes"]) / (HBM_TBPS * 1e6))
        best.append(cud / floor)
        out.append(f"| {r['problem_id']} | {cud:.1f} | {ours:.1f} | {cud / ours:.2f} | "
                   f"{cud / 2:.1f} | {floor:.1f} | {cud / floor:.2f} |")
    now = geomean([float(r["cudnn_us"]) / float(r["call_us"]) for r in grouped])
    out += ["", f"Geomean now {now:.3f}; with every layer at its floor {geomean(best):.2f}; "
            f"layers whose floor is above half of cuDNN's time: "
            f"{sum(b < 2 for b in best)} of {len(best)}."]
    return out


def main() -> None:
    text = ["# Serial split-K and the harness's floor (derived by derived.py)", ""]
    text += serial_table() + floor_table() + bound_table()
    (HERE / "derived.md").write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
