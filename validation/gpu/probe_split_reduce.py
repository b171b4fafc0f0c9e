"""What the split families' separate reduction pass costs, as CUDA-graph replays.

    python3 validation/gpu/probe_split_reduce.py FWD_BENCH.csv BWD_BENCH.csv OUT.csv

For every split config a committed benchmark chose (forward ``splitk``; wgrad configs
with SPLIT_K > 1), times the whole launch and the same launch with its reduction pass
left out (that kernel is not launched, so the output is wrong: only the time counts),
paired as the benchmarks pair ours and cuDNN (``paired_graph_times``). The difference
bounds what a reduction fused into the main kernel could save.
"""

from __future__ import annotations

import csv
import sys
from contextlib import contextmanager

from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher.launch import empty_grad, empty_output, launch, launch_grad
from convdispatch.kernels import splitk, wgrad_gemm
from convdispatch.kernels.base import Candidate
from convdispatch.validation.bench_layers import make_tensors, paired_graph_times
from convdispatch.validation.inputs import make_grad_output

REP_MS = 5


@contextmanager
def reduce_left_out():
    """splitk's reduce kernel and the wgrad families' ``reduce_splits`` not launched."""
    launch_kernel, reduce_splits = splitk.launch_kernel, wgrad_gemm.reduce_splits

    def main_only(kernel, *args, **kw):
        if kernel is not splitk.splitk_reduce_kernel:
            launch_kernel(kernel, *args, **kw)

    splitk.launch_kernel, wgrad_gemm.reduce_splits = main_only, lambda *a, **kw: None
    try:
        yield
    finally:
        splitk.launch_kernel, wgrad_gemm.reduce_splits = launch_kernel, reduce_splits


def split_rows(path: str, direction: str | None) -> list[dict]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for r in rows:
        if direction is not None and r["direction"] != direction:
            continue
        cand = Candidate.parse(r["chosen"])
        if cand.config.get("SPLIT_K", 1) > 1:
            out.append(dict(r, direction=direction or "forward"))
    return out


def caller(cand, direction: str, g, x, w, b, dy):
    """(a call of ``cand`` computing ``direction`` into its own output, that output)."""
    if direction == "forward":
        out = empty_output(x, [g.n, g.k, *g.out_spatial[1:]], g.layout)

        def run():
            launch(cand, x, w, b, g, out)
    else:
        out = empty_grad(direction, x, w)

        def run():
            launch_grad(cand, g, dy, x=x, w=w, out=out)
    return run, out


def runner(row: dict, seed: int):
    """(a call of the row's chosen candidate into one output tensor, that tensor)."""
    g, cand = problem_by_id(row["problem_id"]).geom, Candidate.parse(row["chosen"])
    x, w, b = make_tensors(g, "cuda", seed)
    dy = None if row["direction"] == "forward" else make_grad_output(g, "cuda", seed)
    return caller(cand, row["direction"], g, x, w, b, dy)


def closures(row: dict, seed: int):
    """(whole launch, launch without its reduction) of the row's chosen candidate."""
    run, _ = runner(row, seed)

    def without_reduce():
        with reduce_left_out():
            run()

    run()
    without_reduce()
    return run, without_reduce


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    rows = split_rows(argv[0], None) + split_rows(argv[1], "wgrad")
    fields = ["problem_id", "direction", "chosen", "whole_us", "without_reduce_us",
              "reduce_us", "reduce_share", "cudnn_us"]
    with open(argv[2], "w", newline="") as f:
        out = csv.DictWriter(f, fields)
        out.writeheader()
        for i, row in enumerate(rows):
            whole, main_only = paired_graph_times(*closures(row, seed=i), REP_MS)
            rec = dict(problem_id=row["problem_id"], direction=row["direction"],
                       chosen=row["chosen"], whole_us=whole * 1e3,
                       without_reduce_us=main_only * 1e3, reduce_us=(whole - main_only) * 1e3,
                       reduce_share=(whole - main_only) / whole, cudnn_us=row["cudnn_us"])
            out.writerow(rec)
            f.flush()
            print(f"[{i + 1}/{len(rows)}] {row['problem_id']} {row['direction']}: "
                  f"{rec['whole_us']:.1f} us, without reduce {rec['without_reduce_us']:.1f} "
                  f"({rec['reduce_share']:.0%}), cudnn {float(row['cudnn_us']):.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
