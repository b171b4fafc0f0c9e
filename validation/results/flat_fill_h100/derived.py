"""derived.md from this folder's files, the forward sweep CSVs and the thirty-eighth
session's suite runs.

    python3 validation/results/flat_fill_h100/derived.py
"""

from __future__ import annotations

import csv
import gzip
import math
from pathlib import Path

from convdispatch.validation.bench_layers import layer_pair_lines
from convdispatch.validation.report import geomean

HERE = Path(__file__).parent
SWEEPS = HERE.parents[2] / "data" / "sweeps" / "h100"
DEAD_TAPS = HERE.parent / "dead_taps_h100"
# The shipped model before this session (2a60396bdfd2): its suite runs, full and grouped.
BEFORE = {"float16": [DEAD_TAPS / c / d for c in ("call236", "call237", "call240")
                      for d in ("issue6_fp16", "grouped6_fp16")],
          "bfloat16": [DEAD_TAPS / c / d for c in ("call236", "call237", "call240")
                       for d in ("issue6_bf16", "grouped6_bf16")]}
# Call 251's full runs stopped at their step's limit; call 252 ran the layers they missed.
AFTER = {"float16": (HERE / "call251" / "issue6_fp16", HERE / "call252" / "issue6_fp16_rest"),
         "bfloat16": (HERE / "call251" / "issue6_bf16", HERE / "call252" / "issue6_bf16_rest")}
RERUNS = {"float16": HERE / "call251" / "grouped6_fp16",
          "bfloat16": HERE / "call251" / "grouped6_bf16"}
FIRST = {"float16": HERE / "call249" / "issue6_fp16", "bfloat16": HERE / "call249" / "issue6_bf16"}
# Each dtype's suite again, whole in one run.
WHOLE = {"float16": HERE / "call253" / "issue6_fp16", "bfloat16": HERE / "call254" / "issue6_bf16"}
LEGACY_ITEMS = ("2", "4", "8")
PEAK_TFLOPS = 800.0  # the suites' measured bf16 matrix peak, rounded (802-805 in calls 249-252)


def read(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as f:
        return list(csv.DictReader(f))


def probe_table() -> list[str]:
    """Call 247: each tile's fastest ITEMS against its fastest of 2, 4 and 8."""
    rows = read(HERE / "call247" / "flat_items.csv.gz")
    tiles: dict[tuple, list[dict]] = {}
    for r in rows:
        tiles.setdefault((r["problem_id"], r["BLOCK_M"], r["BLOCK_N"], r["num_warps"]),
                         []).append(r)
    out = ["## Items a program, probed (call 247)", "",
           "Each `grouped_flat` tile of the issue-6 grouped layers (float16) over ITEMS 1-32; "
           "the layer's fastest tile at its fastest ITEMS against its fastest tile at 2, 4 or "
           "8. Programs an SM: the launch's programs over 132; held: what an SM holds by the "
           "compile's registers and shared memory. The probe stopped at ResNeXt3D-50 "
           "layer4.0 at batch 1: ITEMS=1 there did not compile (an LLVM assertion; no "
           "ITEMS of 1 is ever offered).", "",
           "| layer | best (us) | tile, ITEMS | programs an SM (held) | best of 2/4/8 (us) | "
           "tile, ITEMS | programs an SM (held) | ratio |", "|---|---|---|---|---|---|---|---|"]
    layers: dict[str, list[dict]] = {}
    for (pid, *_), rs in tiles.items():
        layers.setdefault(pid, []).extend(rs)

    def cells(r: dict) -> str:
        return (f"{float(r['us']):.1f} | {r['BLOCK_M']}/{r['BLOCK_N']}/{r['num_warps']} w, "
                f"{r['ITEMS']} | {int(r['programs']) / 132:.1f} ({r['resident']})")

    for pid, rs in layers.items():
        best = min(rs, key=lambda r: float(r["us"]))
        legacy = min((r for r in rs if r["ITEMS"] in LEGACY_ITEMS), key=lambda r: float(r["us"]))
        out.append(f"| {pid} | {cells(best)} | {cells(legacy)} | "
                   f"{float(legacy['us']) / float(best['us']):.3f} |")
    return out


def sweep_table() -> list[str]:
    """Call 248: each problem's fastest row without and with the fill ladder's rows."""
    out = ["## The fill ladder swept (call 248)", "",
           "Fastest row of each problem with new rows: without them (every family, "
           "`grouped_flat` at 2, 4 and 8 items) and with them.", "",
           "| sweep | problems | rows | fastest, all families: geomean gain | faster by > 1% | "
           "max | fastest `grouped_flat`: geomean gain | max |",
           "|---|---|---|---|---|---|---|---|"]
    tops = []
    for name in ("train", "holdout"):
        new = read(HERE / "call248" / f"fill_rows_{name}.csv.gz")
        probs = {r["problem_id"] for r in new}
        keys = {(r["problem_id"], r["config"]) for r in new}
        before: dict[str, float] = {}
        after: dict[str, float] = {}
        flat_before: dict[str, float] = {}
        flat_after: dict[str, float] = {}
        for r in read(SWEEPS / f"{name}.csv"):
            pid = r["problem_id"]
            if pid not in probs or r["ok"] != "1":
                continue
            t = float(r["latency_us"])
            fill = r["family"] == "grouped_flat" and (pid, r["config"]) in keys
            after[pid] = min(after.get(pid, math.inf), t)
            if not fill:
                before[pid] = min(before.get(pid, math.inf), t)
            if r["family"] == "grouped_flat":
                flat_after[pid] = min(flat_after.get(pid, math.inf), t)
                if not fill:
                    flat_before[pid] = min(flat_before.get(pid, math.inf), t)
        gain = {p: before[p] / after[p] for p in probs}
        flat_gain = [flat_before[p] / flat_after[p] for p in probs]
        out.append(f"| {name} | {len(probs)} | {len(new)} | {geomean(list(gain.values())):.3f} | "
                   f"{sum(g > 1.01 for g in gain.values())} | {max(gain.values()):.3f} | "
                   f"{geomean(flat_gain):.3f} | {max(flat_gain):.3f} |")
        tops += [(g, p, before[p], after[p]) for p, g in gain.items() if g > 1.05]
    out += ["", "Problems whose fastest row is over 5% faster:", "",
            "| problem | before (us) | after (us) | gain |", "|---|---|---|---|"]
    out += [f"| {p} | {b:.1f} | {a:.1f} | {g:.3f} |" for g, p, b, a in sorted(tops, reverse=True)]
    return out


def ladder_table() -> list[str]:
    """What the family offers on the sweep plans' problems: (tile, fill level) pairs, those
    whose value is 4 or 8 and that value's own rule refuses, and offered configs with no
    sweep row."""
    from convdispatch.data.problems.plans import plan
    from convdispatch.kernels.base import Config
    from convdispatch.kernels.dead_taps import trim_dead_taps
    from convdispatch.kernels.device import lookup
    from convdispatch.kernels.grouped_flat import FILL_LEVELS, FLAT_ITEMS, GroupedFlatFamily

    fam, h100 = GroupedFlatFamily(), lookup("h100")
    out = ["## The ladder on the sweep plans' problems (current rules)", "",
           "| plan | problems | (tile, level) pairs | ladder values (a tile's distinct) of 4 or "
           "8 that their rule (programs >= SMs) refuses | "
           "offered configs | offered, no sweep row |", "|---|---|---|---|---|---|"]
    for name in ("train", "holdout"):
        swept = {(r["problem_id"], f"{r['family']}:{r['config']}")
                 for r in read(SWEEPS / f"{name}.csv") if r["family"] == fam.name}
        problems = pairs = refused = 0
        offered = set()
        for p in plan(name):
            g = trim_dead_taps(p.geom)
            if fam.rejects(g):
                continue
            cands = fam.candidates(g, h100)
            problems += bool(cands)
            offered |= {(p.id, c.id) for c in cands}
            for bm, bn, wp in {(c.config["BLOCK_M"], c.config["BLOCK_N"], c.config["num_warps"])
                               for c in cands}:
                tile = Config(BLOCK_M=bm, BLOCK_N=bn, ITEMS=2, num_warps=wp, num_stages=1)
                fills = fam.fill_items(g, tile, h100.sm_count)
                pairs += len(FILL_LEVELS)
                refused += sum(i in FLAT_ITEMS and "programs for" in (
                    fam.config_ok(g, Config(tile, ITEMS=i), h100) or "") for i in fills)
        out.append(f"| {name} | {problems} | {pairs} | {refused} | "
                   f"{len(offered)} | {len(offered - swept)} |")
    return out


def bench_rows(folder: Path) -> list[dict]:
    return read(folder / "bench.csv")


def stitched(dtype: str) -> list[dict]:
    """Call 251's rows, then call 252's for the layers call 251 did not reach."""
    first, rest = (bench_rows(f) for f in AFTER[dtype])
    seen = {r["problem_id"] for r in first}
    return first + [r for r in rest if r["problem_id"] not in seen]


def median(vals: list[float]) -> float:
    vals = sorted(vals)
    mid = len(vals) // 2
    return vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2


def suite_tables() -> list[str]:
    out = ["## The issue-6 suite (calls 251 and 252; model 605e1d186d09)", "",
           "Call 251 ran each dtype's suite until its step's limit (213 and 236 of 246 "
           "layers); call 252, on the same kind of machine with the same model and harness "
           "(three rounds a side), ran the rest (ResNeXt3D-50 and R3D-18 at batch 8). "
           "Before: the median over the thirty-eighth session's runs of model 2a60396bdfd2 "
           "(calls 236, 237, 240; full suites and grouped reruns).", "",
           "| dtype | category | layers | x cuDNN | min | our time before / after (geomean) | "
           "cuDNN's before / after | choices changed | our time before / after there |",
           "|---|---|---|---|---|---|---|---|---|"]
    tables = []
    for dtype in ("float16", "bfloat16"):
        rows = stitched(dtype)
        old_runs = [{r["problem_id"]: r for r in bench_rows(f)} for f in BEFORE[dtype]
                    if (f / "bench.csv").exists()]
        last_full = next(o for o in reversed(old_runs) if len(o) > 100)
        for cat in ("dense", "grouped", "depthwise"):
            sel = [r for r in rows if r["category"] == cat]
            ours, cudnn, changed = [], [], []
            for r in sel:
                pid = r["problem_id"]
                o = median([float(run[pid]["call_us"]) for run in old_runs if pid in run])
                c = median([float(run[pid]["cudnn_us"]) for run in old_runs if pid in run])
                ours.append(o / float(r["call_us"]))
                cudnn.append(c / float(r["cudnn_us"]))
                if last_full[pid]["chosen"] != r["chosen"]:
                    changed.append(ours[-1])
            ratios = [float(r["speedup_vs_cudnn"]) for r in sel]
            out.append(f"| {dtype} | {cat} | {len(sel)} | {geomean(ratios):.3f} | "
                       f"{min(ratios):.2f} | {geomean(ours):.3f} | {geomean(cudnn):.3f} | "
                       f"{len(changed)} | {geomean(changed) if changed else math.nan:.3f} |")
        top = max(rows, key=lambda r: float(r["tflops"]))
        out.append(f"| {dtype} | top rate | | {float(top['tflops']):.0f} TFLOP/s "
                   f"({float(top['tflops']) / PEAK_TFLOPS:.0%} of {PEAK_TFLOPS:.0f}) | | | | | "
                   f"{top['problem_id']} |")
        rerun = [r for r in bench_rows(RERUNS[dtype]) if r["category"] == "grouped"]
        tables += ["", f"Grouped layers, {dtype}: before (median of calls 236, 237, 240) and "
                   f"call 251/252; the grouped rerun of call 251: "
                   f"{geomean([float(r['speedup_vs_cudnn']) for r in rerun]):.3f}, min "
                   f"{min(float(r['speedup_vs_cudnn']) for r in rerun):.2f}.", ""]
        old = {pid: {"call_us": median([float(run[pid]["call_us"]) for run in old_runs
                                        if pid in run]),
                     "cudnn_us": median([float(run[pid]["cudnn_us"]) for run in old_runs
                                         if pid in run])}
               for pid in {r["problem_id"] for r in rows}}
        tables += layer_pair_lines(old, rows, "grouped", "before", "251/252")
    return out + tables


def whole_run_table() -> list[str]:
    """Calls 253 (float16) and 254 (bfloat16): each suite in one run, same model and harness
    as calls 251-252."""
    out = ["## Calls 253 and 254: each suite whole in one run, model 605e1d186d09", "",
           "| dtype | category | layers | x cuDNN | min | our time before / after (geomean) |",
           "|---|---|---|---|---|---|"]
    notes = []
    for dtype, folder in WHOLE.items():
        rows = bench_rows(folder)
        old_runs = [{r["problem_id"]: r for r in bench_rows(f)} for f in BEFORE[dtype]
                    if (f / "bench.csv").exists()]
        for cat in ("dense", "grouped", "depthwise"):
            sel = [r for r in rows if r["category"] == cat]
            ours = [median([float(run[r["problem_id"]]["call_us"]) for run in old_runs
                            if r["problem_id"] in run]) / float(r["call_us"]) for r in sel]
            ratios = [float(r["speedup_vs_cudnn"]) for r in sel]
            out.append(f"| {dtype} | {cat} | {len(sel)} | {geomean(ratios):.3f} | "
                       f"{min(ratios):.2f} | {geomean(ours):.3f} |")
        top = max(rows, key=lambda r: float(r["tflops"]))
        odd = sum(float(r["call_us"]) > 1.8 * float(r["chosen_us"]) for r in rows)
        notes.append(f"{dtype}: top rate {float(top['tflops']):.0f} TFLOP/s "
                     f"({top['problem_id']}); layers whose call took over 1.8x its kernel "
                     f"alone: {odd}.")
    return out + [""] + notes


def first_run_table() -> list[str]:
    """Call 249: the first retrain (seed 0, d609bb124e8c), pairing two rounds a side."""
    out = ["## Call 249: model d609bb124e8c (seed 0), two rounds a side", "",
           "| dtype | dense | grouped | depthwise | min | layers whose call took > 1.8x its "
           "kernel alone |", "|---|---|---|---|---|---|"]
    for dtype, folder in FIRST.items():
        rows = bench_rows(folder)
        cats = [geomean([float(r["speedup_vs_cudnn"]) for r in rows if r["category"] == c])
                for c in ("dense", "grouped", "depthwise")]
        odd = [f"{r['problem_id']} ({float(r['call_us']):.1f} against "
               f"{float(r['chosen_us']):.1f} us)"
               for r in rows if float(r["call_us"]) > 1.8 * float(r["chosen_us"])]
        out.append(f"| {dtype} | {cats[0]:.3f} | {cats[1]:.3f} | {cats[2]:.3f} | "
                   f"{min(float(r['speedup_vs_cudnn']) for r in rows):.2f} | "
                   f"{'; '.join(odd) or '-'} |")
    return out


def main() -> None:
    parts = [["# The fill ladder of grouped_flat (derived by derived.py)"], probe_table(),
             sweep_table(), ladder_table(), suite_tables(), whole_run_table(),
             first_run_table()]
    (HERE / "derived.md").write_text("\n\n".join("\n".join(p) for p in parts) + "\n")


if __name__ == "__main__":
    main()
