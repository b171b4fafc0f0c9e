"""Where a gradient candidate's time goes, kernel by kernel (torch.profiler, H100).

    python3 validation/gpu/probe_kernel_split.py OUT.csv DIRECTION PROBLEM_ID [TOP]

For each problem (comma-separated ids) takes the TOP fastest swept configs of every
family in the committed gradient sweep (``data/sweeps/h100/bwd_<direction>.csv``) and
cuDNN, runs each 30 times after a warm-up, L2 flushed before every call (a bitwise_not
of 256 MB, left out of the sums), under
torch.profiler, and writes the mean device time of each kernel a call launches (a
staging copy, the main kernel, a split reduction) with the call's total.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import pandas as pd
import torch
from convdispatch.data.problems import problem_by_id
from convdispatch.kernels.base import Candidate
from convdispatch.validation.inputs import make_grad_output, make_inputs, seed_of
from convdispatch.validation.probe_io import write_rows
from convdispatch.validation.timing import grad_fn

REPEATS = 30


def kernel_times(fn) -> dict[str, float]:
    """Mean device microseconds per call of each kernel ``fn`` launches (flush excluded)."""
    flush = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(REPEATS):
            flush.bitwise_not_()  # the flush, told apart from zero fills by its name
            fn()
        torch.cuda.synchronize()
    times: dict[str, float] = defaultdict(float)
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA and "bitwise_not" not in ev.name:
            times[ev.name[:80]] += ev.device_time / REPEATS
    return dict(times)


def main(argv: list[str]) -> int:
    out_csv, direction, pids = argv[0], argv[1], argv[2].split(",")
    top = int(argv[3]) if len(argv) > 3 else 2
    torch.backends.cudnn.benchmark = True
    sweep = pd.read_csv(Path(__file__).resolve().parents[2]
                        / f"data/sweeps/h100/bwd_{direction}.csv")
    rows = []
    for pid in pids:
        g = problem_by_id(pid).geom
        x, w, _ = make_inputs(g, "cuda", seed_of(pid))
        dy = make_grad_output(g, "cuda", seed_of(pid))
        out = torch.empty_like(x if direction == "dgrad" else w)
        s = sweep[(sweep.problem_id == pid) & (sweep.ok == 1)].sort_values("latency_us")
        picks = [None] + [Candidate.parse(f"{r.family}:{r.config}")
                          for _, grp in s.groupby("family") for r in grp.head(top).itertuples()]
        for cand in picks:
            name = "cudnn" if cand is None else cand.id
            swept = float("nan") if cand is None else float(
                s[(s.family == cand.family) & (s.config == str(cand.config))].latency_us.iloc[0])
            try:
                times = kernel_times(grad_fn(cand, direction, dy, x, w, g, out))
            except Exception as e:  # noqa: BLE001 - a probe records what failed and goes on
                print(f"{pid} {name}: {type(e).__name__}: {str(e)[:200]}", flush=True)
                continue
            total = sum(times.values())
            parts = ", ".join(f"{k[:40]} {v:.1f}" for k, v in
                              sorted(times.items(), key=lambda kv: -kv[1]))
            print(f"{pid} {name}: total {total:.1f} us (swept {swept:.1f}): {parts}", flush=True)
            for k, v in times.items():
                rows.append(dict(problem_id=pid, candidate=name, swept_us=swept,
                                 total_us=round(total, 3), kernel=k, kernel_us=round(v, 3)))
    write_rows(out_csv, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
