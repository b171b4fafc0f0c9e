"""New gradient configs against the shipped model's choice and cuDNN, before a sweep.

    python3 validation/gpu/probe_grad_configs.py OUT.csv DIRECTION FAMILY KNOB PROBLEM_IDS

Times, with the sweep's timer (CUDA-graph replay, L2 flushed, median), every feasible
config of FAMILY that sets KNOB (the new part of its space), the candidate the shipped
gradient model picks among the rest, and cuDNN's backward, on each problem
(comma-separated ids), each result checked against cuDNN's in float32. Writes one row
per (problem, candidate) and prints the best new config next to the model's pick.
"""

from __future__ import annotations

import math
import sys
from functools import partial

import torch
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher import registry
from convdispatch.dispatcher.launch import launch_grad
from convdispatch.dispatcher.selection import chooser_for
from convdispatch.kernels.device import spec_of
from convdispatch.validation.inputs import make_grad_output, make_inputs, seed_of, torch_grad
from convdispatch.validation.probe_io import MAX_REL_ERR, checked_time, write_rows
from convdispatch.validation.timing import CudaTimer, TimingSettings, grad_fn


def main(argv: list[str]) -> int:
    out_csv, direction, family, knob, pids = argv[0], argv[1], argv[2], argv[3], argv[4]
    torch.backends.cudnn.benchmark = True
    timer = CudaTimer(TimingSettings(warmup_ms=3, rep_ms=8))
    dev = spec_of("cuda")
    chooser = chooser_for(dev, direction)
    rows = []
    for pid in pids.split(","):
        g = problem_by_id(pid).geom
        x, w, _ = make_inputs(g, "cuda", seed_of(pid))
        dy = make_grad_output(g, "cuda", seed_of(pid))
        ref = torch_grad(g, direction, dy.float(), x.float(), w.float())
        (cudnn_us, _, _), _ = timer.measure(grad_fn(None, direction, dy, x, w, g, None))
        cands = registry.candidates(g, dev, direction)
        new = [c for c in cands if c.family == family and knob in c.config]
        pick = chooser.choose(g, [c for c in cands if c not in new], dev).candidate
        best, pick_us = None, math.nan
        for cand in [pick] + new:
            out = torch.full_like(x if direction == "dgrad" else w, math.nan)
            got = checked_time(f"{pid} {cand.id}",
                               partial(launch_grad, cand, g, dy, x=x, w=w, out=out), out, ref,
                               timer, partial(grad_fn, cand, direction, dy, x, w, g, out))
            if got is None:
                continue
            us, err = got
            ok = err < MAX_REL_ERR
            rows.append(dict(problem_id=pid, candidate=cand.id, model_pick=int(cand is pick),
                             us=round(us, 3), cudnn_us=round(cudnn_us, 3), rel_err=err,
                             ok=int(ok)))
            if cand is pick:
                pick_us = us
            elif ok and (best is None or us < best[0]):
                best = (us, cand.id)
        got = f"new {best[0]:.1f} (x{cudnn_us / best[0]:.2f}) {best[1]}" if best else "new -"
        print(f"{pid}: cudnn {cudnn_us:.1f} | model {pick_us:.1f} (x{cudnn_us / pick_us:.2f}) "
              f"{pick.id} | {got}", flush=True)
    write_rows(out_csv, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
