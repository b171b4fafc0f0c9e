"""The dgrad model's picks after call 214's split rows, priced by the sweep (CPU).

    python3 validation/results/flat3d_h100/dgrad_split_picks.py > .../dgrad_split_picks.md

Call 213 benchmarked the issue-6 grouped pass and the issue-2 pass with the dgrad model
before call 214 (bd59bdf1bf49; its picks are the `chosen` column of call 213's
bench.csv). No GPU time was left to benchmark the retrained model, so this prices each
layer's dgrad pick, before and now, by its latency in bwd_dgrad.csv (the same sweep rows
the model was trained on: in-sample, not a benchmark).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher.api import decide
from convdispatch.kernels.device import KNOWN

HERE = Path(__file__).parent
SWEEP = HERE.parents[2] / "data" / "sweeps" / "h100" / "bwd_dgrad.csv"


def main() -> None:
    rows = pd.read_csv(SWEEP, low_memory=False)
    rows = rows[rows.ok.astype(bool)]
    lat = rows.set_index(["problem_id", "family", "config"]).latency_us
    best = rows.groupby("problem_id").latency_us.min()
    cudnn = rows.groupby("problem_id").cudnn_us.first()
    print("| layer | before (call 213) | us | now | us | best in sweep | cuDNN |")
    print("|---|---|---|---|---|---|---|")
    ratios = []
    for bench in ("call213/bwd_full_grouped6", "call213/bwd_full"):
        for _, r in pd.read_csv(HERE / bench / "bench.csv").iterrows():
            pid = r.problem_id
            if pid not in best.index:
                continue
            before = r.chosen.split(" -> ")[0].split(" & ")[0]
            fam0, cfg0 = before.split(":", 1)
            now = decide(problem_by_id(pid).geom, KNOWN["h100"], direction="dgrad").candidate
            t0 = lat.get((pid, fam0, cfg0), float("nan"))
            t1 = lat.get((pid, now.family, str(now.config)), float("nan"))
            if now.id == before:
                continue
            ratios.append(t0 / t1)
            print(f"| {pid.removesuffix('/float16')} | {before} | {t0:.1f} | {now.id} | "
                  f"{t1:.1f} | {best[pid]:.1f} | {cudnn[pid]:.1f} |")
    print(f"\n{len(ratios)} layers of the two suites changed their dgrad pick; by the sweep's "
          f"latencies the new picks are {float(np.exp(np.log(ratios).mean())):.3f}x as fast "
          f"(geomean before / now; min {min(ratios):.2f}, max {max(ratios):.2f}).")


if __name__ == "__main__":
    main()
