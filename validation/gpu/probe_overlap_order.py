"""Overlapped gradients with dW's kernels launched first against dX's first.

    python3 validation/gpu/probe_overlap_order.py OUT.csv PROBLEM_ID...

For each problem, ``autograd.gradients`` as a CUDA graph captures it (dX and dW at once
where ``pair_overlaps`` lets them), with ``autograd.WGRAD_FIRST`` False and True, timed in
the order off, on, on, off (each side's lower median counts), and whether the gradients
are equal bit for bit.
"""

from __future__ import annotations

import csv
import sys

import torch
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher import autograd
from convdispatch.validation.bench_layers import bench_graph, make_tensors
from convdispatch.validation.inputs import make_grad_output

REP_MS = 5


def timed(args, first: bool) -> float:
    autograd.WGRAD_FIRST = first
    try:
        return bench_graph(lambda: autograd.gradients(*args), REP_MS) * 1e3
    finally:
        autograd.WGRAD_FIRST = None


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    with open(argv[0], "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["problem_id", "dgrad_first_us", "wgrad_first_us", "ratio", "equal"])
        for i, pid in enumerate(argv[1:]):
            g = problem_by_id(pid).geom
            x, w, _ = make_tensors(g, "cuda", i)
            dy = make_grad_output(g, "cuda", i)
            args = (g, dy, x, w)
            got = []
            for first in (False, True):
                autograd.WGRAD_FIRST = first
                got.append(autograd.gradients(*args))
            autograd.WGRAD_FIRST = None
            equal = all(torch.equal(a, b) for a, b in zip(*got))
            a1, b1 = timed(args, False), timed(args, True)
            b2, a2 = timed(args, True), timed(args, False)
            a, b = min(a1, a2), min(b1, b2)
            out.writerow([pid, round(a, 2), round(b, 2), round(b / a, 3), equal])
            f.flush()
            print(f"{pid}: dgrad first {a:.1f} us, wgrad first {b:.1f} ({b / a:.3f}); "
                  f"equal {equal}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
