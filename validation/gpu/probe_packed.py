"""L1_TAPS against the other grouped configs on ResNeXt-50's grouped layers, one run.

    python3 validation/gpu/probe_packed.py OUT.csv [SET_FILTER]

Times, with the sweep's timer (CUDA-graph replay, L2 flushed, median), every feasible
``grouped_packed`` config (with and without L1_TAPS), every feasible ``grouped_rows``
config and cuDNN on the grouped 3x3 layers of ResNeXt-50 (batch 32, fp16,
channels_last), each output checked against cuDNN's in float32. Writes one row per
(layer, candidate) and prints, per layer, the best of each kind next to cuDNN.
"""

from __future__ import annotations

import csv
import math
import sys

import torch
from convdispatch.data.problems import load_problems
from convdispatch.dispatcher import registry, run_candidate
from convdispatch.kernels.device import spec_of
from convdispatch.validation.inputs import make_inputs, seed_of, torch_conv
from convdispatch.validation.timing import CudaTimer, TimingSettings, candidate_fn, cudnn_fn

FAMILIES = ("grouped_packed", "grouped_rows")


def kind(cand) -> str:
    if cand.family == "grouped_rows":
        return "rows"
    return "packed_l1" if cand.config.get("L1_TAPS") else "packed"


def main(argv: list[str]) -> int:
    out_csv = argv[0]
    want = argv[1] if len(argv) > 1 else "/n32/float16"
    torch.backends.cudnn.benchmark = True
    timer = CudaTimer(TimingSettings(warmup_ms=5, rep_ms=10))
    dev = spec_of("cuda")
    probs = [p for p in load_problems("resnext50_32x4d") if p.geom.g > 1 and want in p.id]
    rows = []
    for p in probs:
        g = p.geom
        x, w, b = make_inputs(g, "cuda", seed_of(p.id))
        ref = torch_conv(g, x.float(), w.float(), None if b is None else b.float())
        (cudnn_us, _, _), _ = timer.measure(cudnn_fn(g, x, w, b))
        best = {}
        for cand in registry.candidates(g, dev):
            if cand.family not in FAMILIES:
                continue
            out = torch.full_like(ref, math.nan, dtype=x.dtype,
                                  memory_format=torch.channels_last)
            try:
                run_candidate(cand, x, w, b, g, out=out)
                err = float((out.float() - ref).norm() / ref.norm())
                (us, _, _), _ = timer.measure(candidate_fn(cand, x, w, b, g, out))
            except Exception as e:  # noqa: BLE001 - a probe records what failed and goes on
                print(f"{p.id} {cand.id}: {type(e).__name__}: {str(e)[:200]}", flush=True)
                continue
            ok = err < 1e-2
            rows.append(dict(problem_id=p.id, kind=kind(cand), candidate=cand.id,
                             us=round(us, 3), cudnn_us=round(cudnn_us, 3), rel_err=err,
                             ok=int(ok)))
            k = kind(cand)
            if ok and (k not in best or us < best[k][0]):
                best[k] = (us, cand.id)
        line = " | ".join(f"{k} {us:.1f} (x{cudnn_us / us:.2f}) {cid.split(':')[1]}"
                          for k, (us, cid) in sorted(best.items()))
        print(f"{p.id}: cudnn {cudnn_us:.1f} | {line}", flush=True)
    with open(out_csv, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
