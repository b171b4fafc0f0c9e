"""Flat-grid kernels with copy runs of 16 positions against 32 (``flat_grid.COPY_RUN``).

    python3 validation/gpu/probe_copy_run.py OUT.csv [PER_DIRECTION]

For each grouped layer of the issue-2 suite (ResNeXt-50 at batch 32) and each direction,
the shipped models' PER_DIRECTION (default 2) best-ranked candidates of the flat-grid
families (``grouped_flat``, ``dgrad_grouped_flat``, ``wgrad_grouped_flat``): CUDA-graph
times with COPY_RUN 32 and 16, in the order 32, 16, 16, 32 (each side's lower median
counts), and whether the two outputs are equal bit for bit (the positions no tap reads
are the only ones left out).
"""

from __future__ import annotations

import csv
import sys

import torch
from convdispatch.dispatcher import decide
from convdispatch.kernels import flat_grid
from convdispatch.kernels.device import spec_of
from convdispatch.validation.bench_layers import (
    bench_graph,
    category,
    make_tensors,
    suite_problems,
)
from convdispatch.validation.inputs import make_grad_output
from probe_split_reduce import caller  # this folder: the scripts run from it

REP_MS = 5
FLAT = {"forward": "grouped_flat", "dgrad": "dgrad_grouped_flat",
        "wgrad": "wgrad_grouped_flat"}


def with_run(fn, run: int):
    """``fn`` called with ``flat_grid.COPY_RUN`` set to ``run``."""
    def call():
        was = flat_grid.COPY_RUN
        flat_grid.COPY_RUN = run
        try:
            return fn()
        finally:
            flat_grid.COPY_RUN = was
    return call


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print(__doc__)
        return 2
    per = int(argv[1]) if len(argv) == 2 else 2
    spec = spec_of(torch.device("cuda"))
    fields = ["problem_id", "direction", "candidate", "run32_us", "run16_us", "ratio",
              "equal"]
    with open(argv[0], "w", newline="") as f:
        out = csv.DictWriter(f, fields)
        out.writeheader()
        problems = [p for p in suite_problems("issue2", "float16")
                    if category(p) == "grouped"]
        for i, p in enumerate(problems):
            g = p.geom
            x, w, b = make_tensors(g, "cuda", i)
            dy = make_grad_output(g, "cuda", i)
            for direction, fam in FLAT.items():
                cands = [c for c, _ in decide(g, spec, direction=direction).ranked
                         if c.family == fam][:per]
                for cand in cands:
                    run, o = caller(cand, direction, g, x, w, b, dy)
                    got = {}
                    for r in (32, 16):
                        o.fill_(float("nan"))
                        with_run(run, r)()
                        torch.cuda.synchronize()
                        got[r] = o.clone()
                    t32a, t16a = bench_graph(with_run(run, 32), REP_MS), bench_graph(
                        with_run(run, 16), REP_MS)
                    t16b, t32b = bench_graph(with_run(run, 16), REP_MS), bench_graph(
                        with_run(run, 32), REP_MS)
                    rec = dict(problem_id=p.id, direction=direction, candidate=cand.id,
                               run32_us=min(t32a, t32b) * 1e3, run16_us=min(t16a, t16b) * 1e3,
                               equal=bool(torch.equal(got[32], got[16])))
                    rec["ratio"] = rec["run16_us"] / rec["run32_us"]
                    out.writerow(rec)
                    f.flush()
                    print(f"{p.id} {cand.id}: 32 {rec['run32_us']:.1f} us, 16 "
                          f"{rec['run16_us']:.1f} ({rec['ratio']:.3f}); equal {rec['equal']}",
                          flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
