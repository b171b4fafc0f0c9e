"""What a split wgrad's reduction pass costs and what a leaner pass could, as CUDA-graph
replays of the chosen candidate with its pass replaced.

    python3 validation/gpu/probe_reduce_floor.py BWD_BENCH.csv OUT.csv PROBLEM_ID...

Variants of the pass (``wgrad_gemm.reduce_splits``): ``current``; ``flat_sum`` (the same
slices summed into a float16 scratch in workspace order: coalesced, no index arithmetic;
the dW it leaves is wrong, only the time counts); ``wait_only`` (a dependent kernel that
waits for the main kernel and stores one value: the floor of any pass); ``none`` (no
pass). Timed in the order of VARIANTS and back; each variant's lower median counts.

Call 189's ``const_idx`` column is today's ``current`` (the pass's divisors made constants
after it); its ``current`` column, the pass with run-time divisors, is at commit 513ad22.
That probe, with both, is at commit e241e2f.
"""

from __future__ import annotations

import csv
import sys
from contextlib import contextmanager

import torch
import triton
import triton.language as tl
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher.launch import empty_grad, launch_grad
from convdispatch.kernels import wgrad_depthwise_span, wgrad_gemm
from convdispatch.kernels.base import Candidate
from convdispatch.kernels.common import cdiv
from convdispatch.kernels.dependent import dependent_args, wait_for_prior
from convdispatch.kernels.launcher import launch_kernel
from convdispatch.validation.bench_layers import bench_graph, make_tensors
from convdispatch.validation.inputs import make_grad_output

REP_MS = 5
VARIANTS = ("current", "flat_sum", "wait_only", "none")


@triton.jit
def flat_sum_kernel(ws_ptr, out_ptr, TOTAL, SPLIT, BLOCK: tl.constexpr,
                    SLICES: tl.constexpr, PRIOR: tl.constexpr):
    wait_for_prior(PRIOR)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < TOTAL
    rows = tl.arange(0, SLICES)
    acc = tl.zeros((SLICES, BLOCK), dtype=tl.float32)
    for i in range(0, SPLIT, SLICES):
        sl = i + rows
        acc += tl.load(ws_ptr + sl.to(tl.int64)[:, None] * TOTAL + offs[None, :],
                       mask=(sl < SPLIT)[:, None] & mask[None, :], other=0.0)
    tl.store(out_ptr + offs, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def wait_only_kernel(out_ptr, PRIOR: tl.constexpr):
    wait_for_prior(PRIOR)
    tl.store(out_ptr + tl.program_id(0), 0.0)


SCRATCH: dict = {}


def flat_sum(call, ws, split: int) -> None:
    total = ws.shape[1]
    block, slices, warps = wgrad_gemm.reduce_tile(total, split)
    out = SCRATCH.setdefault(("sum", total), torch.empty(total, dtype=torch.float16,
                                                          device=ws.device))
    launch_kernel(flat_sum_kernel, (cdiv(total, block),), ws, out, total, split,
                  BLOCK=block, SLICES=slices, num_warps=warps,
                  **dependent_args(ws.device))


def wait_only(call, ws, split: int) -> None:
    out = SCRATCH.setdefault("one", torch.empty(1, dtype=torch.float32, device=ws.device))
    launch_kernel(wait_only_kernel, (1,), out, num_warps=1, **dependent_args(ws.device))


@contextmanager
def pass_as(name: str):
    was = wgrad_gemm.reduce_splits
    fn = {"current": was, "flat_sum": flat_sum, "wait_only": wait_only,
          "none": lambda *a: None}[name]
    wgrad_gemm.reduce_splits = wgrad_depthwise_span.reduce_splits = fn
    try:
        yield
    finally:
        wgrad_gemm.reduce_splits = wgrad_depthwise_span.reduce_splits = was


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__)
        return 2
    with open(argv[0], newline="") as f:
        chosen = {r["problem_id"]: r["chosen"] for r in csv.DictReader(f)}
    with open(argv[1], "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["problem_id", "candidate", *(f"{v}_us" for v in VARIANTS)])
        for i, pid in enumerate(argv[2:]):
            cand = Candidate.parse(chosen[pid].split(" & ")[1])
            g = problem_by_id(pid).geom
            x, w, _ = make_tensors(g, "cuda", i)
            dy = make_grad_output(g, "cuda", i)
            dw = empty_grad("wgrad", x, w)

            def run(c=cand, g=g, dy=dy, x=x, w=w, dw=dw):
                launch_grad(c, g, dy, x=x, w=w, out=dw)

            times: dict[str, list[float]] = {v: [] for v in VARIANTS}
            for v in VARIANTS + VARIANTS[::-1]:
                with pass_as(v):
                    times[v].append(bench_graph(run, REP_MS) * 1e3)
            row = [min(times[v]) for v in VARIANTS]
            out.writerow([pid, cand.id, *(round(t, 2) for t in row)])
            f.flush()
            print(pid, cand.id, " ".join(f"{v} {t:.1f}" for v, t in zip(VARIANTS, row)),
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
