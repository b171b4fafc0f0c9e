"""How a backward pass's two kernels overlap, by launch switch.

    python3 validation/gpu/probe_overlap.py OUT.csv [SUITE]

For every grouped layer of the suite (issue6 by default): CUDA-graph times of one
backward pass (dX and dW) as ``autograd.gradients`` runs it, paired with cuDNN's, and in
order on one stream, under each variant of the switches that order and link the launches:
the defaults; dX's kernels launched first (``autograd.WGRAD_FIRST`` False); the split
reduction not released from the wgrad kernel's start (``wgrad_grouped_flat.RELEASE_EARLY``
False); no programmatic dependent launches (``dependent.DEPENDENT_LAUNCH`` False); the two
at once even where both fill the GPU (``autograd.pair_overlaps``). ``PROBE_VARIANTS`` (a
comma list) limits a run to some. The decisions and plans are cleared between variants.
Rows are appended; a rerun skips the (layer, variant) pairs already in OUT.csv.
"""

from __future__ import annotations

import csv
import os
import sys

from convdispatch.dispatcher import api, autograd, fused_pair
from convdispatch.kernels import dependent, wgrad_grouped_flat
from convdispatch.kernels.device import spec_of
from convdispatch.validation.bench_backward import pass_times
from convdispatch.validation.bench_layers import category, make_tensors, suite_problems
from convdispatch.validation.inputs import make_grad_output

REP_MS = 5
FIELDS = ["problem_id", "variant", "chosen", "us", "in_order_us", "cudnn_us"]
# variant -> (module, switch, value)
VARIANTS = {
    "default": [],
    "dgrad_first": [(autograd, "WGRAD_FIRST", False)],
    "no_early_release": [(wgrad_grouped_flat, "RELEASE_EARLY", False)],
    "no_dependent_launch": [(dependent, "DEPENDENT_LAUNCH", False)],
    # at once even where both kernels' families fill the GPU (``fills_gpu``)
    "overlap_always": [(autograd, "pair_overlaps", lambda geom, dev: True)],
}
# The variants a run measures: all, or those named in PROBE_VARIANTS (comma list).
CHOSEN = [v for v in os.environ.get("PROBE_VARIANTS", ",".join(VARIANTS)).split(",") if v]


def done_keys(path: str) -> set[tuple[str, str]]:
    if not os.path.exists(path):
        return set()
    with open(path, newline="") as f:
        return {(r["problem_id"], r["variant"]) for r in csv.DictReader(f)}


def main(out: str, suite: str = "issue6") -> None:
    done = done_keys(out)
    new = not os.path.exists(out)
    with open(out, "a", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        if new:
            writer.writeheader()
        for i, p in enumerate(suite_problems(suite, "float16")):
            if category(p) != "grouped":
                continue
            g = p.geom
            x, w, _ = make_tensors(g, "cuda", seed=i)
            dy = make_grad_output(g, "cuda", seed=i)
            spec = spec_of(dy.device)
            for name in CHOSEN:
                switches = VARIANTS[name]
                if (p.id, name) in done:
                    continue
                saved = [(m, k, getattr(m, k)) for m, k, _ in switches]
                for m, k, v in switches:
                    setattr(m, k, v)
                api.clear_cache()
                try:
                    cudnn_ms, ours_ms, in_order_ms = pass_times(g, dy, x, w, REP_MS)
                    chosen = fused_pair.pass_choice(g, spec)
                finally:
                    for m, k, v in saved:
                        setattr(m, k, v)
                    api.clear_cache()
                writer.writerow(dict(problem_id=p.id, variant=name, chosen=chosen,
                                     us=ours_ms * 1e3, in_order_us=in_order_ms * 1e3,
                                     cudnn_us=cudnn_ms * 1e3))
                f.flush()
                print(f"{p.id} {name}: {ours_ms * 1e3:.1f} us (in order "
                      f"{in_order_ms * 1e3:.1f}) cudnn {cudnn_ms * 1e3:.1f}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
