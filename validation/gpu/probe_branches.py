"""Strided dgrad with its stride phases in order against the phases on side streams.

    python3 validation/gpu/probe_branches.py OUT.csv PROBLEM_IDS [TOP]

For each problem (comma-separated ids): the shipped dgrad model's pick and the TOP
fastest swept configs of every family in ``data/sweeps/h100/bwd_dgrad.csv``, each timed
with the sweep's timer (CUDA-graph replay, L2 flushed, median) twice: with
``launcher.BRANCHES`` off (one stream, the phases in order) and on (each phase's
launch on its own side stream, forked and joined inside the captured graph). Each
result is checked against cuDNN's in float32.
"""

from __future__ import annotations

import math
import sys
from functools import partial
from pathlib import Path

import pandas as pd
import torch
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher import registry
from convdispatch.dispatcher.launch import launch_grad
from convdispatch.dispatcher.selection import chooser_for
from convdispatch.kernels import launcher
from convdispatch.kernels.base import Candidate
from convdispatch.kernels.device import spec_of
from convdispatch.validation.inputs import make_grad_output, make_inputs, seed_of, torch_grad
from convdispatch.validation.probe_io import MAX_REL_ERR, checked_time, write_rows
from convdispatch.validation.timing import CudaTimer, TimingSettings, grad_fn


def main(argv: list[str]) -> int:
    out_csv, pids = argv[0], argv[1].split(",")
    top = int(argv[2]) if len(argv) > 2 else 2
    torch.backends.cudnn.benchmark = True
    timer = CudaTimer(TimingSettings(warmup_ms=3, rep_ms=10))
    dev = spec_of("cuda")
    chooser = chooser_for(dev, "dgrad")
    sweep = pd.read_csv(Path(__file__).resolve().parents[2] / "data/sweeps/h100/bwd_dgrad.csv")
    rows = []
    for pid in pids:
        g = problem_by_id(pid).geom
        x, w, _ = make_inputs(g, "cuda", seed_of(pid))
        dy = make_grad_output(g, "cuda", seed_of(pid))
        ref = torch_grad(g, "dgrad", dy.float(), x.float(), w.float())
        (cudnn_us, _, _), _ = timer.measure(grad_fn(None, "dgrad", dy, x, w, g, None))
        pick = chooser.choose(g, registry.candidates(g, dev, "dgrad"), dev).candidate
        s = sweep[(sweep.problem_id == pid) & (sweep.ok == 1)].sort_values("latency_us")
        cands = [pick] + [Candidate.parse(f"{r.family}:{r.config}")
                          for _, grp in s.groupby("family") for r in grp.head(top).itertuples()]
        best = {}
        for cand in dict.fromkeys(cands):
            got = {}
            for on in (False, True):
                launcher.BRANCHES = on
                out = torch.full_like(x, math.nan)
                timed = checked_time(f"{pid} {cand.id} branches={on}",
                                     partial(launch_grad, cand, g, dy, x=x, w=w, out=out), out,
                                     ref, timer, partial(grad_fn, cand, "dgrad", dy, x, w, g, out))
                if timed is None:
                    continue
                us, err = timed
                got[on] = us
                rows.append(dict(problem_id=pid, candidate=cand.id, model_pick=int(cand == pick),
                                 branches=int(on), us=round(us, 3), cudnn_us=round(cudnn_us, 3),
                                 rel_err=err, ok=int(err < MAX_REL_ERR)))
                if err < MAX_REL_ERR and (on not in best or us < best[on][0]):
                    best[on] = (us, cand.id)
            if len(got) == 2:
                print(f"{pid} {cand.id}: in order {got[False]:.1f} us, branches {got[True]:.1f} "
                      f"us (x{got[False] / got[True]:.2f})", flush=True)
        line = " | ".join(f"{'branches' if on else 'in order'} best {us:.1f} "
                          f"(x{cudnn_us / us:.2f} cuDNN) {cid}" for on, (us, cid) in best.items())
        print(f"== {pid}: cudnn {cudnn_us:.1f} | {line}", flush=True)
    write_rows(out_csv, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
