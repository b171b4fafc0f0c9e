"""Kernel timelines of one backward pass as a CUDA-graph replay: cuDNN's
``convolution_backward`` asked for both gradients against ours in order, under
``torch.profiler`` (CUPTI kernel records).

    python3 validation/gpu/probe_trace.py [--overlapped] OUT.csv PROBLEM_ID...

For each problem and side, five replays after a warm-up; per replay the kernels in start
order with their start (from the first kernel's), duration and the gap after the kernel
before (negative: they overlap). The L2 is flushed before each replay, as do_bench does.
"""

from __future__ import annotations

import csv
import sys

import torch
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher import autograd
from convdispatch.validation.bench_layers import make_tensors
from convdispatch.validation.inputs import make_grad_output
from convdispatch.validation.timing import graph_of

REPLAYS = 5
# With --overlapped first: ours as a CUDA graph captures it by default (dX and dW at once
# on side streams where ``autograd.pair_overlaps`` lets them), not in order.
OVERLAPPED = False


def timeline(replay) -> list[list[tuple[str, float, float]]]:
    """Per replay: (kernel name, start us, end us), in start order."""
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    marks = []
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(REPLAYS):
            flush.zero_()
            torch.cuda.synchronize()
            marks.append(len(marks))
            replay()
            torch.cuda.synchronize()
    kernels = sorted(((e.name, e.time_range.start, e.time_range.end)
                      for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
                      and "zero" not in e.name.lower() and "fill" not in e.name.lower()),
                     key=lambda k: k[1])
    # Replays are apart by a synchronize: split where the gap exceeds 50 us.
    runs, cur = [], []
    for k in kernels:
        if cur and k[1] - max(c[2] for c in cur) > 50:
            runs.append(cur)
            cur = []
        cur.append(k)
    if cur:
        runs.append(cur)
    return runs


def main(argv: list[str]) -> int:
    global OVERLAPPED
    if argv[:1] == ["--overlapped"]:
        OVERLAPPED, argv = True, argv[1:]
    if len(argv) < 2:
        print(__doc__)
        return 2
    with open(argv[0], "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["problem_id", "side", "replay", "kernel", "start_us", "dur_us",
                      "gap_us"])
        for i, pid in enumerate(argv[1:]):
            g = problem_by_id(pid).geom
            x, w, _ = make_tensors(g, "cuda", i)
            dy = make_grad_output(g, "cuda", i)
            args = (g, dy, x, w)
            sides = {"cudnn": lambda a=args: autograd.torch_grads(*a),
                     "ours_in_order": lambda a=args: autograd.gradients(*a)}
            if OVERLAPPED:
                sides["ours_overlapped"] = sides.pop("ours_in_order")
            for side, fn in sides.items():
                autograd.OVERLAP = "graphs" if side == "ours_overlapped" else "never"
                fn()
                torch.cuda.synchronize()
                runs = timeline(graph_of(fn))
                for r, run in enumerate(runs):
                    t0, prev_end = run[0][1], None
                    for name, start, end in run:
                        gap = "" if prev_end is None else round(start - prev_end, 2)
                        out.writerow([pid, side, r, name[:90], round(start - t0, 2),
                                      round(end - start, 2), gap])
                        prev_end = end if prev_end is None else max(prev_end, end)
                    span = max(k[2] for k in run) - t0
                    print(f"{pid} {side} replay {r}: {len(run)} kernels, span {span:.1f} us, "
                          + ", ".join(f"{n[:28]} {e - s:.1f}" for n, s, e in run), flush=True)
            autograd.OVERLAP = "graphs"
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
