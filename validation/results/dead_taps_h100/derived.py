"""derived.md from this folder's files and the forward sweep CSVs.

    python3 validation/results/dead_taps_h100/derived.py
"""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

from convdispatch.validation.bench_layers import layer_pair_lines
from convdispatch.validation.report import geomean

HERE = Path(__file__).parent
SWEEPS = HERE.parents[2] / "data" / "sweeps" / "h100"
BEFORE = {"float16": HERE.parent / "filter_vector_h100" / "call231" / "issue6_fp16",
          "bfloat16": HERE.parent / "filter_vector_h100" / "call232" / "issue6_bf16"}
MIDDLE = {"float16": HERE / "call235" / "issue6_fp16",
          "bfloat16": HERE / "call235" / "issue6_bf16"}
AFTER = {"float16": HERE / "call236" / "issue6_fp16", "bfloat16": HERE / "call236" / "issue6_bf16"}
RERUNS = {"float16": HERE / "call236" / "grouped6_fp16",
          "bfloat16": HERE / "call236" / "grouped6_bf16"}


def read(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as f:
        return list(csv.DictReader(f))


def sweep_rows() -> dict[str, list[dict]]:
    return {name: read(SWEEPS / f"{name}.csv") for name in ("train", "holdout")}


def dead_tap_table(rows: dict[str, list[dict]]) -> list[str]:
    """Each problem with dead taps: its fastest row and family before call 234 (taps that
    read only padding launched) and after (without them)."""
    before: dict[str, tuple[float, str]] = {}
    for r in read(HERE / "before_call234_dead_taps.csv.gz"):
        if r["ok"] == "1":
            t = float(r["latency_us"])
            if r["problem_id"] not in before or t < before[r["problem_id"]][0]:
                before[r["problem_id"]] = (t, r["family"])
    after: dict[str, tuple[float, str, float]] = {}
    for r in rows["train"] + rows["holdout"]:
        pid = r["problem_id"]
        if pid in before and r["ok"] == "1":
            t = float(r["latency_us"])
            if pid not in after or t < after[pid][0]:
                after[pid] = (t, r["family"], float(r["cudnn_us"]))
    out = ["## Problems with dead taps: the sweep's fastest row before and after (call 234)",
           "", "| problem | before (us) | family | after (us) | family | before / after | "
           "cuDNN (us, call 234) |", "|---|---|---|---|---|---|---|"]
    for pid in sorted(before):
        (t0, f0), (t1, f1, cu) = before[pid], after[pid]
        out.append(f"| {pid} | {t0:.2f} | {f0} | {t1:.2f} | {f1} | {t0 / t1:.2f} | {cu:.2f} |")
    return out


def probe_tables() -> list[str]:
    rows = read(HERE / "call234" / "probe_taps_regs.csv")
    out = []
    for part, title, off, on in (
            ("dead_taps", "Dead taps, paired in one process (call 234)", "stored geometry",
             "without dead taps"),
            ("filter_regs", "grouped_flat's filter tiles in registers, paired (call 234)",
             "shared memory every item", "registers")):
        sel = [r for r in rows if r["part"] == part]
        out += ["", f"## {title}", "", f"| problem | candidate | {off} (us) | {on} (us) | "
                "ratio |", "|---|---|---|---|---|"]
        for r in sel:
            out.append(f"| {r['problem_id']} | {r['candidate']} | {float(r['off_us']):.2f} | "
                       f"{float(r['on_us']):.2f} | {float(r['off_over_on']):.3f} |")
        out.append(f"| geomean | {len(sel)} pairs | | | "
                   f"{geomean([float(r['off_over_on']) for r in sel]):.3f} |")
    return out


def filter_regs_sweep(rows: dict[str, list[dict]]) -> list[str]:
    """Call 234's grouped_flat rows (registers on 2D 16-channel tiles; the others the same
    kernel measured again) against the rows they replaced (measured in earlier sessions):
    the unaffected rows show the drift between sessions."""
    out = ["", "## grouped_flat swept with the filter tiles in registers (call 234)", "",
           "Rows of the same config: the rows before call 234 (earlier sessions) over call "
           "234's. 'Unaffected' rows ran the same code both times (3D or 32-channel tiles).",
           "", "| sweep | rows | configs | per config | fastest config a problem (problems) "
           "| min | max |", "|---|---|---|---|---|---|---|"]
    for name in ("train", "holdout"):
        old = {(r["problem_id"], r["config"]): r
               for r in read(HERE / f"before_call234_grouped_flat_{name}.csv.gz")
               if r["ok"] == "1"}
        new = [r for r in rows[name] if r["family"] == "grouped_flat" and r["ok"] == "1"]
        for label, affected in (("affected", True), ("unaffected", False)):
            ratios, best = [], {}
            for r in new:
                key = (r["problem_id"], r["config"])
                hit = r["t"] == "1" and "BLOCK_N=16" in r["config"]
                if key not in old or hit != affected:
                    continue
                old_t, new_t = float(old[key]["latency_us"]), float(r["latency_us"])
                ratios.append(old_t / new_t)
                b = best.setdefault(r["problem_id"], [float("inf"), float("inf")])
                b[0], b[1] = min(b[0], old_t), min(b[1], new_t)
            per = [o / n for o, n in best.values()]
            out.append(f"| {name} | {label} | {len(ratios)} | {geomean(ratios):.3f} | "
                       f"{geomean(per):.3f} ({len(per)}) | {min(per):.3f} | {max(per):.3f} |")
    return out


def items16_table(rows: dict[str, list[dict]]) -> list[str]:
    """Call 239's grouped_flat configs of 16 items a program (not kept) against the
    family's other configs, each problem's fastest of each; and call 240's suite, whose
    model (5355dcdab3cb) was trained with them."""
    out = ["", "## grouped_flat with 16 items a program (call 239; not kept)", "",
           "| sweep | problems | 16 items fastest on | by (geomean) | "
           "all problems: latency of the others' best / of 16's best (geomean) |",
           "|---|---|---|---|---|"]
    for name in ("train", "holdout"):
        new = read(HERE / "call239" / f"items16_rows_{name}.csv.gz")
        best16: dict[str, float] = {}
        for r in new:
            if r["ok"] == "1":
                best16[r["problem_id"]] = min(best16.get(r["problem_id"], float("inf")),
                                              float(r["latency_us"]))
        others: dict[str, float] = {}
        for r in rows[name]:
            if r["family"] == "grouped_flat" and r["ok"] == "1" and r["problem_id"] in best16:
                others[r["problem_id"]] = min(others.get(r["problem_id"], float("inf")),
                                              float(r["latency_us"]))
        ratio = [others[p] / best16[p] for p in best16 if p in others]
        wins = [v for v in ratio if v > 1]
        out.append(f"| {name} | {len(ratio)} | {len(wins)} | "
                   f"{geomean(wins) if wins else float('nan'):.3f} | {geomean(ratio):.3f} |")
    out += ["", "| dtype | call 236 grouped (2a60396bdfd2) | call 240 grouped (5355dcdab3cb) | "
            "our grouped time 236 / 240 | cuDNN's 236 / 240 |", "|---|---|---|---|---|"]
    for dtype, tag in (("float16", "fp16"), ("bfloat16", "bf16")):
        a = {r["problem_id"]: r for r in read(AFTER[dtype] / "bench.csv")
             if r["category"] == "grouped"}
        b = [r for r in read(HERE / "call240" / f"issue6_{tag}" / "bench.csv")
             if r["category"] == "grouped"]
        sa = geomean([float(a[r["problem_id"]]["speedup_vs_cudnn"]) for r in b])
        sb = geomean([float(r["speedup_vs_cudnn"]) for r in b])
        ours = geomean([float(a[r["problem_id"]]["call_us"]) / float(r["call_us"]) for r in b])
        cu = geomean([float(a[r["problem_id"]]["cudnn_us"]) / float(r["cudnn_us"]) for r in b])
        out.append(f"| {dtype} | {sa:.3f} | {sb:.3f} | {ours:.3f} | {cu:.3f} |")
    return out


def suite_tables() -> list[str]:
    """Each dtype's suite: the model before this session, call 235 (dead taps dropped;
    model 9cc5462393ad) and call 236 (and grouped_flat's registers; the shipped model),
    with call 236's second run of the grouped layers."""
    out = []
    for dtype in ("float16", "bfloat16"):
        old = {r["problem_id"]: r for r in read(BEFORE[dtype] / "bench.csv")}
        runs = [("235", read(MIDDLE[dtype] / "bench.csv"))]
        if (AFTER[dtype] / "bench.csv").exists():
            runs.append(("236", read(AFTER[dtype] / "bench.csv")))
        name, new = runs[-1]
        out += ["", f"## The issue-6 suite, {dtype}: against the model before "
                f"({BEFORE[dtype].parent.name})", "",
                "| category | layers | before | " + " | ".join(f"call {n}" for n, _ in runs)
                + " | min before | " + " | ".join(f"min {n}" for n, _ in runs)
                + f" | our time before / {name} |",
                "|---|---|---|" + "---|" * (2 * len(runs) + 2)]
        for cat in ("dense", "grouped", "depthwise"):
            ids = [r["problem_id"] for r in new if r["category"] == cat]
            a = [float(old[i]["speedup_vs_cudnn"]) for i in ids]
            cols = [[float(r["speedup_vs_cudnn"]) for r in rows if r["category"] == cat]
                    for _, rows in runs]
            t = [float(old[r["problem_id"]]["call_us"]) / float(r["call_us"]) for r in new
                 if r["category"] == cat]
            out.append(f"| {cat} | {len(ids)} | {geomean(a):.3f} | "
                       + " | ".join(f"{geomean(c):.3f}" for c in cols)
                       + f" | {min(a):.2f} | " + " | ".join(f"{min(c):.2f}" for c in cols)
                       + f" | {geomean(t):.3f} |")
        rerun_path = RERUNS[dtype] / "bench.csv"
        if rerun_path.exists():
            b = [float(r["speedup_vs_cudnn"]) for r in read(rerun_path)]
            out += ["", f"Grouped layers run again (call 236): {geomean(b):.3f}, min "
                    f"{min(b):.2f}."]
        out += [""] + layer_pair_lines(old, new, "grouped", "before", name)
    return out


def main() -> None:
    rows = sweep_rows()
    lines = ["# Dead taps (derived by derived.py)", ""] + dead_tap_table(rows) + probe_tables()
    lines += filter_regs_sweep(rows) + suite_tables() + items16_table(rows)
    (HERE / "derived.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
