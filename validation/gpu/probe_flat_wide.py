"""32-channel tiles of wgrad_grouped_flat for groups of 4-16 channels, before a sweep.

    python3 validation/gpu/probe_flat_wide.py OUT.csv PROBLEM_IDS

``flat_grid.flat_config_rejects`` keeps BLOCK_N=32 from groups that fit 16 (the tile's
zero blocks double). Since call 168 the 32-channel rows are held in planes (no bank
conflicts) and take 4 warps, where 16-channel rows keep 2-way conflicts and 2 warps.
Times, with the sweep's timer, the shipped wgrad model's pick and the BLOCK_N=32 configs of
4 warps and splits 8-32 that the family's hard rules allow (launched directly: the soft
rule would refuse them), each checked against torch in float32. Writes one row per
(problem, candidate).
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
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.device import spec_of
from convdispatch.kernels.flat_grid import FLAT_POSITIONS
from convdispatch.validation.inputs import make_grad_output, make_inputs, seed_of, torch_grad
from convdispatch.validation.probe_io import MAX_REL_ERR, checked_time, write_rows
from convdispatch.validation.timing import CudaTimer, TimingSettings, grad_fn

FAMILY = "wgrad_grouped_flat"


def wide_configs(geom, dev) -> list[Candidate]:
    fam = registry.family(FAMILY)
    out = []
    for pos in FLAT_POSITIONS:
        for split in (8, 16, 32):
            cfg = Config(BLOCK_M=pos, BLOCK_N=32, SPLIT_K=split, num_warps=4, num_stages=2)
            if fam.hard_ok(geom, cfg, dev) is None:
                out.append(Candidate(FAMILY, cfg))
    return out


def main(argv: list[str]) -> int:
    out_csv, pids = argv[0], argv[1]
    torch.backends.cudnn.benchmark = True
    timer = CudaTimer(TimingSettings(warmup_ms=3, rep_ms=8))
    dev = spec_of("cuda")
    chooser = chooser_for(dev, "wgrad")
    rows = []
    for pid in pids.split(","):
        g = problem_by_id(pid).geom
        x, w, _ = make_inputs(g, "cuda", seed_of(pid))
        dy = make_grad_output(g, "cuda", seed_of(pid))
        ref = torch_grad(g, "wgrad", dy.float(), x.float(), w.float())
        (cudnn_us, _, _), _ = timer.measure(grad_fn(None, "wgrad", dy, x, w, g, None))
        pick = chooser.choose(g, registry.candidates(g, dev, "wgrad"), dev).candidate
        best, pick_us = None, math.nan
        for cand in [pick] + wide_configs(g, dev):
            out = torch.full_like(w, math.nan)
            got = checked_time(f"{pid} {cand.id}",
                               partial(launch_grad, cand, g, dy, x=x, w=w, out=out), out, ref,
                               timer, partial(grad_fn, cand, "wgrad", dy, x, w, g, out))
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
        got = f"wide {best[0]:.1f} (x{cudnn_us / best[0]:.2f}) {best[1]}" if best else "wide -"
        print(f"{pid}: cudnn {cudnn_us:.1f} | model {pick_us:.1f} (x{cudnn_us / pick_us:.2f}) "
              f"{pick.id} | {got}", flush=True)
    write_rows(out_csv, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
