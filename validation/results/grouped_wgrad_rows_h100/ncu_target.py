"""Run the fastest ``wgrad_grouped_taps`` configs of a probe sweep twice each, for Nsight
Compute (device call 76).

    python validation/results/grouped_wgrad_rows_h100/ncu_target.py SWEEP.csv PROBLEM_ID

For the problem: the fastest config with one filter row a program and one stage (the
family as it was), and the fastest of all.
"""

from __future__ import annotations

import sys

import pandas as pd
import torch
from convdispatch.dispatcher.launch import run_grad_candidate
from convdispatch.kernels.base import Candidate, Config
from convdispatch.validation.inputs import make_grad_output, make_inputs
from convdispatch.validation.sweep_csv import row_geometry


def main(csv: str, problem_id: str) -> None:
    rows = pd.read_csv(csv)
    rows = rows[(rows.problem_id == problem_id) & rows.ok.astype(bool)]
    old = rows[~rows.config.str.contains("FILTER_ROWS") & rows.config.str.contains("num_stages=1")
               & rows.config.str.contains("BLOCK_N=32")]
    picks = [old.nsmallest(1, "latency_us"), rows.nsmallest(1, "latency_us")]
    geom = row_geometry(rows.iloc[0])
    x, w, _ = make_inputs(geom, "cuda", seed=0)
    dy = make_grad_output(geom, "cuda", seed=0)
    out = torch.empty_like(w)
    for pick in picks:
        cfg_s = pick.config.iloc[0]
        print(problem_id, cfg_s, float(pick.latency_us.iloc[0]), flush=True)
        cfg = Config.parse(cfg_s)
        for _ in range(2):
            run_grad_candidate(Candidate("wgrad_grouped_taps", cfg), "wgrad", dy, x, w, geom,
                               out=out)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
