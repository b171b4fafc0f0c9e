"""The fused-pass probe of call 145 as a table: per problem, cuDNN's backward (both
gradients), the separate picks in order, the fused pass with the wgrad pick's config
(where it fuses) and the best of the fused configs timed.

    python validation/results/fused_depthwise_h100/summary.py > summary.md
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent


def geomean(vals) -> float:
    vals = [v for v in vals if v == v]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else math.nan


def main() -> None:
    d = pd.read_csv(HERE / "call145" / "fused_probe.csv")
    env = (HERE / "call145" / "env.txt").read_text().strip().splitlines()
    print("# Call 145: dX and dW in one pass of wgrad_depthwise_rows (not kept)\n")
    print(f"`{env[-1]}`; `validation/gpu/call145.sh`, probe in `fused_dgrad.patch`. "
          "Times in us (CUDA-graph replays, L2 flushed, median); all fused configs timed "
          f"were within {d[['rel_err_x', 'rel_err_w']].max().max():.1e} of cuDNN's float32 "
          "gradients.\n")
    print("| problem | cuDNN both | separate picks, in order | wgrad pick alone | fused, "
          "wgrad pick's config | best fused (of up to 16) | separate / best fused |")
    print("|---|---|---|---|---|---|---|")
    gains, pick_gains = [], []
    for pid, g in d.groupby("problem_id", sort=False):
        one = {w: g[g.what == w].us for w in ("cudnn_both", "separate", "wgrad_pick_alone",
                                              "fused_pick")}
        fused = g[g.what.isin(["fused", "fused_pick"]) & (g.ok == 1)].us
        sep = float(one["separate"].iloc[0])
        best = float(fused.min()) if len(fused) else math.nan
        pick = float(one["fused_pick"].iloc[0]) if len(one["fused_pick"]) else math.nan
        gains.append(sep / best)
        pick_gains.append(sep / pick)
        print(f"| {pid} | {float(one['cudnn_both'].iloc[0]):.1f} | {sep:.1f} | "
              f"{float(one['wgrad_pick_alone'].iloc[0]):.1f} | "
              f"{'-' if pick != pick else f'{pick:.1f}'} | {best:.1f} | {sep / best:.2f} |")
    print(f"\nSeparate / best fused: geomean {geomean(gains):.3f} over {len(gains)} problems "
          f"(min {min(gains):.2f}, max {max(gains):.2f}). Where the wgrad model's pick fuses "
          f"({sum(v == v for v in pick_gains)} problems): separate / fused pick geomean "
          f"{geomean(pick_gains):.3f}.")


if __name__ == "__main__":
    main()
