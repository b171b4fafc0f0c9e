"""The two same-run comparisons the README quotes, from the committed rows (CPU only).

    python validation/results/grouped_halo_h100/compare_rows.py > compare_rows.md

1. Call 134: the best shipped `wgrad_grouped_taps` config over the best PREFETCH config,
   per problem (both swept in one run, `call134/taps_prefetch.csv.gz`).
2. Calls 136 and 141: the best of the family's first version
   (`call136/halo_rows_v1.csv.gz`) over the best of the committed version
   (`call141/halo_v2.csv.gz`; two runs, the same sweep harness and GPU).
Rows come from NVIDIA H100 80GB HBM3, torch 2.11.0+cu130, triton 3.6.0 (each call's
env.txt); the sweep commands are in validation/gpu/call134.sh, call136.sh, call141.sh.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent


def geomean_line(name: str, ratios: list[float]) -> str:
    r = np.array(ratios)
    return (f"| {name} | {len(r)} | {np.exp(np.log(r).mean()):.3f} | {r.min():.2f}-{r.max():.2f} "
            f"| {(r > 1).sum()} |")


def main() -> int:
    taps = pd.read_csv(HERE / "call134" / "taps_prefetch.csv.gz")
    taps = taps[taps.ok == 1]
    pf = taps.config.str.contains("PREFETCH")
    prefetch = [g[~pf[g.index]].latency_us.min() / g[pf[g.index]].latency_us.min()
                for _, g in taps.groupby("problem_id")]
    v1 = pd.read_csv(HERE / "call136" / "halo_rows_v1.csv.gz")
    v2 = pd.read_csv(HERE / "call141" / "halo_v2.csv.gz")
    best1 = v1[v1.ok == 1].groupby("problem_id").latency_us.min()
    best2 = v2[v2.ok == 1].groupby("problem_id").latency_us.min()
    both = best1.index.intersection(best2.index)
    versions = list(best1[both] / best2[both])
    print("| comparison | problems | geomean (old best / new best) | range | new faster on |")
    print("|---|---|---|---|---|")
    print(geomean_line("shipped taps space / PREFETCH (call 134)", prefetch))
    print(geomean_line("halo first version / committed version (calls 136, 141)", versions))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
