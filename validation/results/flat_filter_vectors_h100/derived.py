"""derived.md from this folder's files:

    cd validation/results/flat_filter_vectors_h100 && python3 derived.py > derived.md

Reads the probe of call 277 (filter tiles in vector loads against two bytes at a time),
the rows that `convdispatch retire` set aside in call 277 (``retired_*.csv.gz``) and the
same configs measured again there (``new_*.csv.gz``), the issue-6 suite of calls 278 and
279 against call 276's (``../filter_burst_h100/``), and the grouped layers' backward pass
of calls 278 and 281 against call 272's two runs (``../row_reuse_h100/``), and the L2
prefetch probe of call 280; the strided layers' share of the gap (call 279 and the sweep
CSVs in data/sweeps/h100/ as committed with this folder).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from convdispatch.validation.bench_layers import backward_run_lines
from convdispatch.validation.derived_tables import (
    DTYPES,
    GROUPED_SUITE,
    forward_sweep_rows,
    full_pass,
    heading,
    line,
    probe_lines,
    suite_lines,
    sweep_lines,
    table_head,
)
from convdispatch.validation.row_compare import geomean

HERE = Path(__file__).parent
BEFORE = HERE.parent / "filter_burst_h100" / "call276"
BACKWARD_BEFORE = [HERE.parent / "row_reuse_h100" / "call272" / f"bwd_full_grouped6_{i}"
                   for i in (1, 2)]


def vector_probe() -> list[str]:
    d = pd.read_csv(HERE / "call277" / "vectors_fp16.csv")
    return probe_lines(
        d.assign(x=d.scalar_us / d.vector_us),
        "Call 277: filter tiles in vector loads against two bytes at a time",
        "Each issue-6 grouped layer's fastest flat tile in the sweep, at its fastest ITEMS, "
        "both ways in turn (float16).", "scalar / vector (geomean)")


def prefetch_probe() -> list[str]:
    out = []
    for rows in (4, 32):
        d = pd.read_csv(HERE / "call280" / f"prefetch{rows}_fp16.csv")
        out += probe_lines(
            d.assign(x=d.plain_us / d.prefetch_us),
            f"Call 280: grouped_packed with a bulk L2 prefetch of its input rows, {rows} rows "
            "a prefetch (not kept)",
            "The issue-6 grouped layers where call 279's model chose grouped_packed, that "
            "config both ways in turn (float16).", "without / with (geomean)")
    return out


def backward_lines() -> list[str]:
    runs = {call: full_pass(HERE / f"call{call}" / "bwd_full_grouped6") for call in (278, 281)}
    before = [full_pass(path) for path in BACKWARD_BEFORE]
    out = ["## One backward pass of the 21 grouped layers: calls 278 and 281 (dgrad model "
           "52254c184852) against call 272's two runs (30406f020844)", "",
           backward_run_lines(list(runs.values()), before, "278/281", "272"), "",
           "Call 281 against call 278 (the same pass again): "
           + backward_run_lines([runs[281]], [runs[278]], "281", "278"), "",
           "Layers whose in-order time (both gradients on one stream) in call 278 is 1.3x or "
           "more of call 281's:", "", *table_head(["layer", "in order 278 (us)", "281"])]
    for pid, row in runs[278].items():
        again = float(runs[281][pid]["in_order_us"])
        if float(row["in_order_us"]) > 1.3 * again:
            out.append(line([pid.rsplit("/", 1)[0], f"{float(row['in_order_us']):.1f}",
                             f"{again:.1f}"]))
    return out + [""]


def strided_lines() -> list[str]:
    """Call 279's grouped layers: stride 2 against stride 1, the grouped geomean were every
    strided layer at least 1.4x or 1.6x, and the model's choices against the best row of
    the sweep CSVs (as committed with this folder) on the same layers (float16)."""
    out = heading("Where 2x is: the strided grouped layers (call 279)", "",
                  ["dtype", "strided layers", "x cuDNN", "stride-1 layers", "x cuDNN",
                   "all, strided at >= 1.4", "all, strided at >= 1.6"])
    for _, short in DTYPES:
        d = pd.read_csv(HERE / "call279" / f"issue6_{short}" / "bench.csv")
        d = d[d.category == "grouped"]
        strided = d.geometry.str.contains(r"stride=\(2")
        floors = [geomean(d.speedup_vs_cudnn.where(~strided, d.speedup_vs_cudnn.clip(lower=t)))
                  for t in (1.4, 1.6)]
        out.append(line([short, int(strided.sum()), f"{geomean(d.speedup_vs_cudnn[strided]):.3f}",
                         int((~strided).sum()), f"{geomean(d.speedup_vs_cudnn[~strided]):.3f}",
                         *(f"{f:.3f}" for f in floors)]))
    d = pd.read_csv(HERE / "call279" / "issue6_fp16" / "bench.csv")
    d = d[d.category == "grouped"]
    sweep = forward_sweep_rows()
    sweep = sweep[sweep.problem_id.isin(d.problem_id)]
    swept = sweep.assign(chosen=sweep.family + ":" + sweep.config).set_index(
        ["problem_id", "chosen"]).latency_us
    chosen = swept.loc[list(zip(d.problem_id, d.chosen))].to_numpy()
    best = sweep.groupby("problem_id").latency_us.min().loc[d.problem_id].to_numpy()
    return out + ["", f"The model's choices (float16) against the sweep's best row on these "
                  f"{len(d)} layers, both as swept: {geomean(best / chosen):.3f} of the best "
                  f"(lowest {min(best / chosen):.3f}).", ""]


def main() -> None:
    lines = ["# Filter tiles in vector loads: derived tables", "",
             "Made by `derived.py` from this folder's files.", ""]
    lines += vector_probe()
    for name, title in (("train", "forward, train plan"), ("holdout", "forward, holdout plan")):
        lines += sweep_lines(HERE, name, title, "call 277", GROUPED_SUITE)
    for call in ("278", "279"):
        lines += suite_lines(BEFORE, HERE / f"call{call}", f"The issue-6 suite: call {call} "
                             "(model d102c50e1121) against call 276 (82834fac9bd6)",
                             ("call 276", f"call {call}"))
    lines += strided_lines()
    lines += backward_lines()
    lines += prefetch_probe()
    print("\n".join(lines).rstrip())


if __name__ == "__main__":
    main()
