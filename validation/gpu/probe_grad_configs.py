"""New gradient configs against the shipped model's choice and cuDNN, before a sweep.

    python3 validation/gpu/probe_grad_configs.py OUT.csv DIRECTION FAMILY KNOB PROBLEM_IDS

Times, with the sweep's timer (CUDA-graph replay, L2 flushed, median), every feasible
config of FAMILY that sets KNOB (the new part of its space), the candidate the shipped
gradient model picks among the rest, and cuDNN's backward, on each problem
(comma-separated ids), each result checked against cuDNN's in float32. Writes one row
per (problem, candidate) and prints the best new config next to the model's pick.
"""

from __future__ import annotations

import sys

from convdispatch.dispatcher import registry
from convdispatch.validation.probe_io import probe_gradients


def main(argv: list[str]) -> int:
    out_csv, direction, family, knob, pids = argv[0], argv[1], argv[2], argv[3], argv[4]

    def candidates(g, dev, chooser):
        cands = registry.candidates(g, dev, direction)
        new = [c for c in cands if c.family == family and knob in c.config]
        return chooser.choose(g, [c for c in cands if c not in new], dev).candidate, new

    return probe_gradients(out_csv, direction, pids, candidates)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
