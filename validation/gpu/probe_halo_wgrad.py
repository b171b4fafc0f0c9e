"""wgrad_grouped_halo against the wgrad model's pick among the other families and cuDNN.

    python3 validation/gpu/probe_halo_wgrad.py OUT.csv PROBLEM_IDS

Times every feasible config of ``kernels/wgrad_grouped_halo.py`` on each problem
(comma-separated ids) with the sweep's timer (CUDA-graph replay, L2 flushed, median), each
result checked against cuDNN's in float32; writes one row per (problem, candidate) and
prints the best next to the pick. Device call 135 ran an earlier form of this script on the
kernel's first version (stride 1, a halo pitch of TILE_W + 2 columns, configs named by
ROWS): validation/results/grouped_halo_h100/.
"""

from __future__ import annotations

import math
import sys
from functools import partial

import torch
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher import registry
from convdispatch.dispatcher.selection import chooser_for
from convdispatch.kernels.device import spec_of
from convdispatch.validation.inputs import make_grad_output, make_inputs, seed_of, torch_grad
from convdispatch.validation.probe_io import MAX_REL_ERR, checked_time, write_rows
from convdispatch.validation.timing import CudaTimer, TimingSettings, grad_fn

FAMILY = "wgrad_grouped_halo"


def main(argv: list[str]) -> int:
    out_csv, pids = argv[0], argv[1]
    torch.backends.cudnn.benchmark = True
    timer = CudaTimer(TimingSettings(warmup_ms=2, rep_ms=5))
    dev = spec_of("cuda")
    chooser = chooser_for(dev, "wgrad")
    rows = []
    for pid in pids.split(","):
        g = problem_by_id(pid).geom
        x, w, _ = make_inputs(g, "cuda", seed_of(pid))
        dy = make_grad_output(g, "cuda", seed_of(pid))
        ref = torch_grad(g, "wgrad", dy.float(), x.float(), w.float())
        (cudnn_us, _, _), _ = timer.measure(grad_fn(None, "wgrad", dy, x, w, g, None))
        cands = registry.candidates(g, dev, "wgrad")
        mine = [c for c in cands if c.family == FAMILY]
        pick = chooser.choose(g, [c for c in cands if c.family != FAMILY], dev).candidate
        best, pick_us = None, math.nan
        for cand in [pick] + mine:
            out = torch.full_like(w, math.nan)
            timed = partial(grad_fn, cand, "wgrad", dy, x, w, g, out)
            got = checked_time(f"{pid} {cand.id}", timed, out, ref, timer, timed)
            if got is None:
                continue
            us, err = got[0][0], got[1]
            ok = err < MAX_REL_ERR
            rows.append(dict(problem_id=pid, candidate=cand.id, model_pick=int(cand is pick),
                             us=round(us, 3), cudnn_us=round(cudnn_us, 3), rel_err=err,
                             ok=int(ok)))
            if cand is pick:
                pick_us = us
            elif ok and (best is None or us < best[0]):
                best = (us, cand.id)
        got = f"halo {best[0]:.1f} (x{cudnn_us / best[0]:.2f}) {best[1]}" if best else "halo -"
        print(f"{pid}: cudnn {cudnn_us:.1f} | pick {pick_us:.1f} (x{cudnn_us / pick_us:.2f}) "
              f"{pick.id} | {got}", flush=True)
        write_rows(out_csv, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
