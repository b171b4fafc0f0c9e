"""grouped_flat (forward) and its dgrad twin with kernel variants, before a sweep.

    python3 validation/gpu/probe_flat_variants.py OUT.csv PROBLEM_IDS

Variants (``grouped_flat.VARIANT``): 16-channel rows of the phase images in planes of 8
(PLANAR=16; conflict-free ldmatrix, where whole 32-byte rows conflict 2-way) and the filter
tiles read once into registers (HOIST) instead of from shared memory at every item. Call
177 found the forward kernel's time in ldmatrix-fed mma waits (short scoreboard, half the
samples) with half of its shared-load wavefronts bank conflicts. For each problem
(comma-separated ids), direction (forward, dgrad) and variant, every config the family
offers, of the TOP fastest in the sweep CSV (holdout.csv for the forward, bwd_dgrad.csv),
is checked against torch in float32 and timed with the sweep's timer (CUDA-graph
replay, L2 flushed, median); one row per (problem, direction, variant, config).
"""

from __future__ import annotations

import math
import sys
from functools import partial

import torch
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher import registry
from convdispatch.dispatcher.launch import launch_grad, run_candidate
from convdispatch.kernels import grouped_flat
from convdispatch.validation.inputs import (
    make_grad_output,
    make_inputs,
    seed_of,
    torch_conv,
    torch_grad,
)
from convdispatch.validation.probe_io import MAX_REL_ERR, checked_time, write_rows
from convdispatch.validation.timing import (
    CudaTimer,
    TimingSettings,
    candidate_fn,
    cudnn_fn,
    grad_fn,
)

VARIANTS = {"whole": dict(PLANAR=32, HOIST=False), "planes": dict(PLANAR=16, HOIST=False),
            "hoist": dict(PLANAR=32, HOIST=True), "planes_hoist": dict(PLANAR=16, HOIST=True)}
FAMILIES = {"forward": "grouped_flat", "dgrad": "dgrad_grouped_flat"}
SWEEPS = {"forward": "data/sweeps/h100/holdout.csv", "dgrad": "data/sweeps/h100/bwd_dgrad.csv"}
TOP = 4


def fastest(direction: str, pid: str, fam) -> list:
    """The family's TOP fastest configs on the problem in the sweep CSV."""
    import pandas as pd
    from convdispatch.kernels.base import Candidate

    d = pd.read_csv(SWEEPS[direction], low_memory=False)
    d = d[(d.problem_id == pid) & (d.family == fam.name) & (d.ok == 1)]
    return [Candidate.parse(f"{fam.name}:{c}")
            for c in d.sort_values("latency_us").config.head(TOP)]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        raise SystemExit(__doc__)
    torch.backends.cudnn.benchmark = True
    timer = CudaTimer(TimingSettings(warmup_ms=2, rep_ms=5))
    rows = []
    for pid in argv[1].split(","):
        g = problem_by_id(pid).geom
        x, w, _ = make_inputs(g, "cuda", seed_of(pid))
        dy = make_grad_output(g, "cuda", seed_of(pid))
        for direction, family in FAMILIES.items():
            fam = registry.family(family)
            if direction == "forward":
                ref = torch_conv(g, x.float(), w.float(), None)
                (cudnn_us, _, _), _ = timer.measure(cudnn_fn(g, x, w, None))
            else:
                ref = torch_grad(g, direction, dy.float(), x.float(), w.float())
                (cudnn_us, _, _), _ = timer.measure(grad_fn(None, direction, dy, x, w, g,
                                                            None))
            best = {}
            for name, variant in VARIANTS.items():
                grouped_flat.VARIANT.update(variant)
                for cand in fastest(direction, pid, fam):
                    if direction == "forward":
                        out = torch.full_like(ref, math.nan, dtype=x.dtype)
                        run = partial(run_candidate, cand, x, w, None, g, out=out)
                        timed = partial(candidate_fn, cand, x, w, None, g, out)
                    else:
                        out = torch.full_like(x, math.nan)
                        run = partial(launch_grad, cand, g, dy, x=x, w=w, out=out)
                        timed = partial(grad_fn, cand, direction, dy, x, w, g, out)
                    got = checked_time(f"{pid} {direction} {name} {cand.id}", run, out, ref,
                                       timer, timed)
                    if got is None:
                        continue
                    us, err = got
                    rows.append(dict(problem_id=pid, direction=direction, variant=name,
                                     candidate=cand.id, us=round(us, 3),
                                     cudnn_us=round(cudnn_us, 3), rel_err=err,
                                     ok=int(err < MAX_REL_ERR)))
                    if err < MAX_REL_ERR:
                        best[name] = min(best.get(name, math.inf), us)
            print(f"{pid} {direction}: cudnn {cudnn_us:.1f} | "
                  + " | ".join(f"{k} {v:.1f}" for k, v in best.items()), flush=True)
    grouped_flat.VARIANT.update(VARIANTS["whole"])
    write_rows(argv[0], rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
