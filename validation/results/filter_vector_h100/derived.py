"""derived.md from this folder's files and the forward sweep CSVs.

    python3 validation/results/filter_vector_h100/derived.py
"""

from __future__ import annotations

import csv
import gzip
from collections import defaultdict
from pathlib import Path

from convdispatch.kernels.dead_taps import has_dead_taps
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.validation.bench_layers import layer_pair_lines
from convdispatch.validation.report import geomean

HERE = Path(__file__).parent
SWEEPS = HERE.parents[2] / "data" / "sweeps" / "h100"
CALL207 = HERE.parent / "flat3d_h100" / "call207" / "issue6_fp16" / "bench.csv"


def read(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as f:
        return list(csv.DictReader(f))


def sweep_table() -> list[str]:
    """Per problem, the fastest grouped_packed config before call 229 and after (the same
    configs on both sides), by channels a group. The problems with dead taps take the rows
    call 234 set aside (``../dead_taps_h100/``): it measured them again without those taps."""
    before = {(r["csv"], r["problem_id"], r["config"]): float(r["latency_us"])
              for r in read(HERE / "before_call229_grouped_packed.csv.gz")}
    best: dict[tuple, list[float]] = {}
    cg_of = {}
    set_aside = read(HERE.parent / "dead_taps_h100" / "before_call234_dead_taps.csv.gz")
    for name in ("train", "holdout"):
        rows = [r for r in read(SWEEPS / f"{name}.csv")
                if not has_dead_taps(ConvGeometry.from_row(r))]
        for r in rows + [r for r in set_aside if r["sweep"] == name]:
            key = (name, r["problem_id"], r["config"])
            if r["family"] != "grouped_packed" or key not in before:
                continue
            pair = best.setdefault((name, r["problem_id"]), [float("inf"), float("inf")])
            pair[0] = min(pair[0], before[key])
            pair[1] = min(pair[1], float(r["latency_us"]))
            cg_of[(name, r["problem_id"])] = int(r["c"]) // int(r["g"])
    by_cg = defaultdict(list)
    for key, (old, new) in best.items():
        by_cg[cg_of[key]].append(old / new)
    out = ["## grouped_packed's fastest config a problem, before / after (calls 229-230)", "",
           "| channels a group | problems | geomean | min | max |", "|---|---|---|---|---|"]
    for cg in sorted(by_cg):
        v = by_cg[cg]
        out.append(f"| {cg} | {len(v)} | {geomean(v):.3f} | {min(v):.3f} | {max(v):.3f} |")
    return out


def supergroup_table() -> list[str]:
    """Call 228: the dispatcher on each grouped layer, and on it as super-groups."""
    rows = read(HERE / "call228" / "supergroups.csv")
    out = ["", "## The issue-6 grouped layers as block-diagonal super-groups (call 228)", "",
           "cuDNN ran without `cudnn.benchmark` in this probe: its columns are not the "
           "suite's.", "",
           "| layer | ours (us) | P | ours on P-group super-groups (us) | "
           "cuDNN on them (us) |", "|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['problem_id']} | {float(r['ours_us']):.1f} | {r['per']} | "
                   f"{float(r['ours_super_us']):.1f} | {float(r['cudnn_super_us']):.1f} |")
    return out


def bench_tables() -> list[str]:
    """Call 231's issue-6 runs against call 207's (the model before)."""
    out = []
    now = HERE / "call231" / "issue6_fp16" / "bench.csv"
    if not now.exists():
        return out
    new = read(now)
    old = {r["problem_id"]: r for r in read(CALL207)}
    out += ["", "## The issue-6 forward suite, float16 (call 231 against call 207)", "",
            "| category | layers | call 207 | call 231 | min 207 | min 231 |",
            "|---|---|---|---|---|---|"]
    for cat in ("dense", "grouped", "depthwise"):
        sel = [r for r in new if r["category"] == cat]
        a = [float(old[r["problem_id"]]["speedup_vs_cudnn"]) for r in sel]
        b = [float(r["speedup_vs_cudnn"]) for r in sel]
        out.append(f"| {cat} | {len(sel)} | {geomean(a):.3f} | {geomean(b):.3f} | "
                   f"{min(a):.2f} | {min(b):.2f} |")
    out += ["", "Grouped layers, each side's own cuDNN time:", ""]
    out += layer_pair_lines(old, new, "grouped", "207", "231")
    out += ["", "Other runs (each category's geomean vs cuDNN, its min):", "",
            "| run | dtype | dense | grouped | depthwise |", "|---|---|---|---|---|"]
    for call, name in (("call231", "grouped6_bf16"), ("call232", "issue6_bf16"),
                       ("call232", "grouped6_fp16")):
        rows = read(HERE / call / name / "bench.csv")
        cells = []
        for cat in ("dense", "grouped", "depthwise"):
            v = [float(r["speedup_vs_cudnn"]) for r in rows if r["category"] == cat]
            cells.append(f"{geomean(v):.3f} ({min(v):.2f})" if v else "-")
        out.append(f"| {call}/{name} | {rows[0]['problem_id'].rsplit('/', 1)[1]} | "
                   + " | ".join(cells) + " |")
    ours = [float(old[r["problem_id"]]["call_us"]) / float(r["call_us"])
            for r in new if r["category"] == "grouped"]
    out += ["", f"Our grouped time, call 207 / call 231 (geomean over the 21 layers): "
            f"{geomean(ours):.3f}."]
    return out


def main() -> None:
    text = ["# grouped_packed's filter copies (derived by derived.py)", ""]
    text += sweep_table() + supergroup_table() + bench_tables()
    (HERE / "derived.md").write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
