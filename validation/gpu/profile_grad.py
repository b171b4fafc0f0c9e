"""One gradient launch between cudaProfilerStart/Stop, for Nsight Compute.

    ncu --profile-from-start off ... python3 validation/gpu/profile_grad.py PROBLEM_ID \
        DIRECTION [CANDIDATE_ID]

Without CANDIDATE_ID the launch is cuDNN's (``torch.ops.aten.convolution_backward`` with
only that gradient, ``cudnn.benchmark`` on). Inputs are made, everything compiled and
cuDNN's algorithm picked before the profiled window, which holds exactly one call.
"""

from __future__ import annotations

import sys

import torch
from convdispatch.data.problems import problem_by_id
from convdispatch.kernels.base import Candidate
from convdispatch.validation.inputs import make_grad_output, make_inputs, seed_of
from convdispatch.validation.timing import grad_fn, profiler_window


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        raise SystemExit(__doc__)
    pid, direction = argv[0], argv[1]
    cand = Candidate.parse(argv[2]) if len(argv) == 3 else None
    g = problem_by_id(pid).geom
    x, w, _ = make_inputs(g, "cuda", seed_of(pid))
    dy = make_grad_output(g, "cuda", seed_of(pid))
    out = torch.empty_like(x if direction == "dgrad" else w)
    profiler_window(grad_fn(cand, direction, dy, x, w, g, out))
    return 0


if __name__ == "__main__":
    torch.backends.cudnn.benchmark = True
    raise SystemExit(main(sys.argv[1:]))
