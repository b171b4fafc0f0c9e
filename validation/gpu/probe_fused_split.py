"""wgrad_grouped_flat's split reduction in the kernel against the separate pass.

    python3 validation/gpu/probe_fused_split.py OUT.csv [PER_LAYER]

For each grouped layer of the issue-2 suite (ResNeXt-50 at batch 32), the shipped wgrad
model's best-ranked ``wgrad_grouped_flat`` candidate of each SPLIT_K (PER_LAYER of them at
most, default 4): CUDA-graph times with the slices added by a reduction pass
(``FUSED_SLICES`` 0) and in the kernel (``FUSED_SLICES`` 64), in the order pass, fused,
fused, pass (each side's lower median counts), and how far apart the two results are
(relative norm).
"""

from __future__ import annotations

import csv
import sys

import torch
from convdispatch.dispatcher import decide, registry
from convdispatch.dispatcher.launch import empty_grad, launch_grad
from convdispatch.kernels import wgrad_grouped_flat
from convdispatch.kernels.device import spec_of
from convdispatch.kernels.wgrad_gemm import split_steps
from convdispatch.validation.bench_layers import (
    bench_graph,
    category,
    make_tensors,
    suite_problems,
)
from convdispatch.validation.inputs import make_grad_output

REP_MS = 5


def timed(run, fused: bool) -> float:
    was = wgrad_grouped_flat.FUSED_SLICES
    wgrad_grouped_flat.FUSED_SLICES = 64 if fused else 0
    try:
        return bench_graph(run, REP_MS)
    finally:
        wgrad_grouped_flat.FUSED_SLICES = was


def caller(cand, g, dy, x, w):
    """A call of ``cand`` into its own dW."""
    out = empty_grad("wgrad", x, w)

    def run():
        launch_grad(cand, g, dy, x=x, w=w, out=out)
    return run


def best_per_split(g, spec, family: str, n: int) -> list:
    """The best-ranked split candidate of ``family`` for each SPLIT_K, best first, n at
    most."""
    seen, out = set(), []
    for c, _ in decide(g, spec, direction="wgrad").ranked:
        k = c.config["SPLIT_K"]
        if c.family == family and k > 1 and k not in seen:
            seen.add(k)
            out.append(c)
    return out[:n]


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print(__doc__)
        return 2
    per_layer = int(argv[1]) if len(argv) == 2 else 4
    spec = spec_of(torch.device("cuda"))
    fam = registry.family("wgrad_grouped_flat")
    fields = ["problem_id", "candidate", "slices", "packs", "pass_us", "fused_us",
              "fused_over_pass", "rel_diff"]
    with open(argv[0], "w", newline="") as f:
        out = csv.DictWriter(f, fields)
        out.writeheader()
        problems = [p for p in suite_problems("issue2", "float16")
                    if category(p) == "grouped"]
        for i, p in enumerate(problems):
            g = p.geom
            ranked = best_per_split(g, spec, fam.name, per_layer)
            x, w, _ = make_tensors(g, "cuda", i)
            dy = make_grad_output(g, "cuda", i)
            for cand in ranked:
                grid = fam.grid(g, cand.config)
                res = {}
                for fused in (False, True):
                    o = empty_grad("wgrad", x, w)
                    was = wgrad_grouped_flat.FUSED_SLICES
                    wgrad_grouped_flat.FUSED_SLICES = 64 if fused else 0
                    try:
                        launch_grad(cand, g, dy, x=x, w=w, out=o)
                    finally:
                        wgrad_grouped_flat.FUSED_SLICES = was
                    res[fused] = o.double()

                run = caller(cand, g, dy, x, w)
                a1, b1 = timed(run, False), timed(run, True)
                b2, a2 = timed(run, True), timed(run, False)
                rec = dict(problem_id=p.id, candidate=cand.id,
                           slices=split_steps(grid.k_steps, cand.config["SPLIT_K"])[1],
                           packs=grid.mult, pass_us=min(a1, a2) * 1e3,
                           fused_us=min(b1, b2) * 1e3)
                rec["fused_over_pass"] = rec["fused_us"] / rec["pass_us"]
                rec["rel_diff"] = float((res[True] - res[False]).norm() / res[False].norm())
                out.writerow(rec)
                f.flush()
                print(f"{p.id} {cand.id}: slices {rec['slices']}, pass {rec['pass_us']:.1f}"
                      f" us, fused {rec['fused_us']:.1f} ({rec['fused_over_pass']:.3f}); "
                      f"diff {rec['rel_diff']:.1e}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
