"""grouped_tma's whole config space against the shipped model's choice and cuDNN, one run.

    git apply validation/results/grouped_tma_h100/grouped_tma.patch  # the family, not kept
    python3 validation/gpu/probe_grouped_tma.py OUT.csv

Times, with the sweep's timer (CUDA-graph replay, L2 flushed, median), every feasible
``grouped_tma`` config, the candidate the shipped forward model picks among the other
families, and cuDNN on the grouped layers of 16+ channels a group of ResNeXt-50,
ResNeXt-101 and the 3D ResNeXt (fp16, channels_last), each output checked against
cuDNN's in float32. Writes one row per (layer, candidate) and prints, per layer, the
best grouped_tma config next to the model's choice and cuDNN.
"""

from __future__ import annotations

import math
import sys
from functools import partial

import torch
from convdispatch.data.problems import load_problems
from convdispatch.dispatcher import registry, run_candidate
from convdispatch.dispatcher.selection import chooser_for
from convdispatch.kernels.device import spec_of
from convdispatch.validation.inputs import make_inputs, seed_of, torch_conv
from convdispatch.validation.probe_io import MAX_REL_ERR, checked_time, write_rows
from convdispatch.validation.timing import CudaTimer, TimingSettings, candidate_fn, cudnn_fn

FAMILY = "grouped_tma"
WANT = ("resnext50_32x4d/layer3.1.conv2/n1/", "resnext50_32x4d/layer4.1.conv2/n1/",
        "/n8/", "/n32/")


def main(argv: list[str]) -> int:
    out_csv = argv[0]
    torch.backends.cudnn.benchmark = True
    timer = CudaTimer(TimingSettings(warmup_ms=3, rep_ms=8))
    dev = spec_of("cuda")
    chooser = chooser_for(dev)
    probs = [p for s in ("resnext50_32x4d", "resnext101", "video3d") for p in load_problems(s)
             if p.geom.g > 1 and registry.family(FAMILY).rejects(p.geom) is None
             and any(w in p.id for w in WANT)]
    rows = []
    for p in probs:
        g = p.geom
        x, w, b = make_inputs(g, "cuda", seed_of(p.id))
        ref = torch_conv(g, x.float(), w.float(), None if b is None else b.float())
        (cudnn_us, _, _), _ = timer.measure(cudnn_fn(g, x, w, b))
        cands = registry.candidates(g, dev)
        model_pick = chooser.choose(g, [c for c in cands if c.family != FAMILY], dev).candidate
        best, model_us = None, math.nan
        for cand in [model_pick] + [c for c in cands if c.family == FAMILY]:
            out = torch.full_like(ref, math.nan, dtype=x.dtype, memory_format=(
                torch.channels_last if ref.dim() == 4 else torch.channels_last_3d))
            got = checked_time(f"{p.id} {cand.id}",
                               partial(run_candidate, cand, x, w, b, g, out=out), out, ref,
                               timer, partial(candidate_fn, cand, x, w, b, g, out))
            if got is None:
                continue
            us, err = got
            ok = err < MAX_REL_ERR
            rows.append(dict(problem_id=p.id, candidate=cand.id, model_pick=int(cand is model_pick),
                             us=round(us, 3), cudnn_us=round(cudnn_us, 3), rel_err=err,
                             ok=int(ok)))
            if cand is model_pick:
                model_us = us
            elif ok and (best is None or us < best[0]):
                best = (us, cand.id)
        tma = f"tma {best[0]:.1f} (x{cudnn_us / best[0]:.2f}) {best[1]}" if best else "tma -"
        print(f"{p.id}: cudnn {cudnn_us:.1f} | model {model_us:.1f} "
              f"(x{cudnn_us / model_us:.2f}) {model_pick.id} | {tma}", flush=True)
    write_rows(out_csv, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
