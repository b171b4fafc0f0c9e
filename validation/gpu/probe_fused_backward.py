"""Both gradients in one kernel (``backward_grouped_flat``) against the chosen pair.

    python3 validation/gpu/probe_fused_backward.py OUT.csv [DTYPE]

For every grouped layer of the issue-2 suite that the fused kernel takes: dX and dW of
each of its configs, into outputs poisoned with NaN, checked against torch's float32
gradients; then CUDA-graph times of one backward pass: cuDNN's and ours as
``autograd.gradients`` runs it (overlapped; the two paired as the benchmarks pair them),
ours in order (both with ``fused_pair.FUSE`` off: the two directions' own kernels), each
fused config, and the dispatcher's config with an image's rows in items of ROWS and a
remainder (``BALANCED_ROWS`` off). Rows are appended and a rerun skips the layers and
configs already in OUT.csv.
"""

from __future__ import annotations

import csv
import os
import sys

import torch
from convdispatch.dispatcher import autograd, fused_pair
from convdispatch.dispatcher.launch import empty_grad
from convdispatch.kernels import backward_grouped_flat as fused
from convdispatch.kernels.device import spec_of
from convdispatch.validation.bench_backward import pass_times
from convdispatch.validation.bench_layers import (
    bench_graph,
    category,
    make_tensors,
    suite_problems,
)
from convdispatch.validation.inputs import make_grad_output, rel_err

REP_MS = 5
FIELDS = ["problem_id", "variant", "config", "us", "cudnn_us", "dx_err", "dw_err"]


def done_keys(path: str) -> set[tuple[str, str]]:
    if not os.path.exists(path):
        return set()
    with open(path, newline="") as f:
        return {(r["problem_id"], r["config"]) for r in csv.DictReader(f)}


def measure(i: int, p, done: set, emit, spec) -> None:
    """The rows of one layer not yet in ``done``."""
    g = p.geom
    x, w, _ = make_tensors(g, "cuda", seed=i)
    dy = make_grad_output(g, "cuda", seed=i)
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        ref_dx, ref_dw = autograd.torch_grads(g, dy.float(), x.float(), w.float())

    def errors(dx, dw) -> dict:
        return dict(dx_err=rel_err(dx, ref_dx), dw_err=rel_err(dw, ref_dw))

    if (p.id, "pair") not in done:
        fused_pair.FUSE = False  # the two directions' own kernels
        try:
            errs = errors(*autograd.gradients(g, dy, x, w))
            cudnn_ms, ours_ms, in_order_ms = pass_times(g, dy, x, w, REP_MS)
        finally:
            fused_pair.FUSE = True
        emit(problem_id=p.id, variant="overlapped", config="pair", us=ours_ms * 1e3,
             cudnn_us=cudnn_ms * 1e3, **errs)
        emit(problem_id=p.id, variant="in_order", config="pair_in_order", us=in_order_ms * 1e3,
             cudnn_us=cudnn_ms * 1e3, **errs)
    for cfg in fused.CONFIGS:
        key = ";".join(f"{k}={v}" for k, v in sorted(cfg.items()))
        if (p.id, key) in done or fused.config_rejects(g, cfg, spec) is not None:
            continue
        dx = empty_grad("dgrad", x, w).fill_(float("nan"))
        dw = empty_grad("wgrad", x, w).fill_(float("nan"))

        def run(c=cfg, a=dx, b=dw):
            fused.launch(dy, x, w, a, b, g, c)

        try:
            run()
            torch.cuda.synchronize()
            errs = errors(dx, dw)
            ms = bench_graph(run, REP_MS)
        except Exception as e:  # a failing config is data
            print(f"failed {p.id} {key}: {type(e).__name__}: {str(e)[:300]}", flush=True)
            continue
        emit(problem_id=p.id, variant="fused", config=key, us=ms * 1e3, cudnn_us=float("nan"),
             **errs)
    cfg = fused.pair_config(g, spec)
    key = "unbalanced:" + ";".join(f"{k}={v}" for k, v in sorted(cfg.items()))
    if (p.id, key) not in done:
        fused.BALANCED_ROWS = False
        try:
            dx = empty_grad("dgrad", x, w).fill_(float("nan"))
            dw = empty_grad("wgrad", x, w).fill_(float("nan"))
            fused.launch(dy, x, w, dx, dw, g, cfg)
            errs = errors(dx, dw)
            ms = bench_graph(lambda: fused.launch(dy, x, w, dx, dw, g, cfg), REP_MS)
        finally:
            fused.BALANCED_ROWS = True
        emit(problem_id=p.id, variant="fused_unbalanced", config=key, us=ms * 1e3,
             cudnn_us=float("nan"), **errs)


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print(__doc__)
        return 2
    path, dtype = argv[0], (argv[1] if len(argv) > 1 else "float16")
    done = done_keys(path)
    spec = spec_of(torch.device("cuda"))
    problems = [p for p in suite_problems("issue2", dtype)
                if category(p) == "grouped" and fused.supports(p.geom) is None]
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        out = csv.DictWriter(f, FIELDS)
        if new:
            out.writeheader()

        def emit(**rec):
            out.writerow(rec)
            f.flush()
            print(", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                            for k, v in rec.items()), flush=True)

        for i, p in enumerate(problems):
            measure(i, p, done, emit, spec)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
