"""What a launch costs in the benchmark's harness, and serial split-K against the reduce pass.

    python3 validation/gpu/probe_serial_floor.py BENCH.csv OUT_DIR

1. ``floor.csv``: CUDA-graph replays timed as ``bench_layers.bench_graph`` times a layer
   (``do_bench``, L2 flushed before each replay, median) of kernels that do nothing: one
   program, 256 programs, two such kernels in a row, the second as a programmatic
   dependent. Five rounds each.
2. ``serial.csv``: every split config BENCH.csv (a ``bench_layers`` run) chose, against the
   same config with SERIAL=1, paired in one process (``paired_graph_times``: a, b, b, a).
   SERIAL exists only with validation/results/serial_split_h100/serial_split.patch applied
   (measured in call 227, not kept).
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl
from convdispatch.dispatcher import run_candidate
from convdispatch.kernels.base import Candidate, Config
from convdispatch.validation.bench_layers import (
    bench_graph,
    make_tensors,
    paired_graph_times,
    suite_problems,
)


@triton.jit
def nothing_kernel(out_ptr, PRIOR: tl.constexpr):
    if PRIOR:
        tl.inline_asm_elementwise("griddepcontrol.wait; // $0", "=r", [], dtype=tl.int32,
                                  is_pure=False, pack=1)
    if tl.program_id(0) < 0:  # never: a store the compiler cannot drop
        tl.store(out_ptr, 1)


def floors(out: Path) -> None:
    buf = torch.zeros(1, device="cuda", dtype=torch.int32)
    cases = {
        "one kernel, 1 program": lambda: nothing_kernel[(1,)](buf, PRIOR=False),
        "one kernel, 256 programs": lambda: nothing_kernel[(256,)](buf, PRIOR=False),
        "two kernels, 256 programs each": lambda: (nothing_kernel[(256,)](buf, PRIOR=False),
                                                   nothing_kernel[(256,)](buf, PRIOR=False)),
        "two kernels, the second a dependent launch": lambda: (
            nothing_kernel[(256,)](buf, PRIOR=False),
            nothing_kernel[(256,)](buf, PRIOR=True, launch_pdl=True)),
    }
    rows = []
    for name, fn in cases.items():
        fn()
        torch.cuda.synchronize()
        us = [bench_graph(fn, 5) * 1e3 for _ in range(5)]
        rows.append({"case": name, "median_us": round(statistics.median(us), 3),
                     "min_us": round(min(us), 3), "max_us": round(max(us), 3)})
        print(rows[-1], flush=True)
    with open(out / "floor.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def time_pair(plain: Candidate, serial: Candidate, geom, x, w, b) -> tuple[bool, float, float]:
    """(the same bits?, graph ms of ``plain``, of ``serial``), paired a, b, b, a."""
    outs = {c: run_candidate(c, x, w, b, geom) for c in (plain, serial)}
    torch.cuda.synchronize()
    buf = torch.empty_like(outs[plain])
    a, s = paired_graph_times(lambda: run_candidate(plain, x, w, b, geom, out=buf),
                              lambda: run_candidate(serial, x, w, b, geom, out=buf), 5)
    return torch.equal(outs[plain], outs[serial]), a, s


def serial_pairs(bench_csv: Path, out: Path) -> None:
    rows = []
    geoms = {p.id: p.geom for dt in ("float16", "bfloat16") for p in suite_problems("issue6", dt)}
    with open(bench_csv) as f:
        chosen = [r for r in csv.DictReader(f) if "SPLIT_K=" in r["chosen"]]
    for r in chosen:
        family, cfg_text = r["chosen"].split(":", 1)
        cfg = Config.parse(cfg_text)
        if cfg.get("SPLIT_K", 1) < 2 or family not in ("grouped_packed", "splitk"):
            continue
        geom = geoms[r["problem_id"]]
        x, w, b = make_tensors(geom, "cuda", 0)
        plain, serial = Candidate(family, cfg), Candidate(family, Config(cfg, SERIAL=1))
        same, a, s = time_pair(plain, serial, geom, x, w, b)
        rows.append({"problem_id": r["problem_id"], "category": r["category"],
                     "chosen": r["chosen"], "reduce_pass_us": round(a * 1e3, 3),
                     "serial_us": round(s * 1e3, 3), "same_bits": same,
                     "cudnn_us_in_bench": r["cudnn_us"]})
        print(rows[-1], flush=True)
    with open(out / "serial.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def main() -> None:
    bench_csv, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    floors(out)
    serial_pairs(bench_csv, out)


if __name__ == "__main__":
    main()
