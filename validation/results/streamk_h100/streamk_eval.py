"""Stream-K rows (call 71) against the persistent TMA families' rows of the same config.

    python validation/results/streamk_h100/streamk_eval.py > \
        validation/results/streamk_h100/streamk_eval.md

``streamk_rows.csv.gz`` holds the 3239 train-plan rows of ``pointwise_tma_streamk`` and
``implicit_gemm_tma_streamk`` (``streamk.patch``); each is compared with the
``*_persistent`` row of the same problem and config in ``data/sweeps/h100/train.csv``,
by the waves the config's tiles make on 132 SMs, then each problem's best stream-K config
against the best row of every other family. Geometric means of latency ratios (> 1:
stream-K is faster).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from convdispatch.kernels.implicit_gemm_tma import box_grid
from convdispatch.validation.sweep_csv import read_sweep, row_geometry

HERE = "validation/results/streamk_h100"
PAIRS = (("pointwise_tma_persistent", "pointwise_tma_streamk"),
         ("implicit_gemm_tma_persistent", "implicit_gemm_tma_streamk"))
WAVES = (0, 0.5, 1, 1.5, 2, 3, 4)


def gm(s) -> float:
    return float(np.exp(np.log(np.asarray(s, dtype=float)).mean()))


def waves(row) -> float:
    """Tiles of the row's config over 132 SMs."""
    geom = row_geometry(row)
    knobs = dict(kv.split("=") for kv in row["config"].split(";"))
    bm, bn = int(knobs["BLOCK_M"]), int(knobs["BLOCK_N"])
    pix = (box_grid(geom, bm, int(knobs["TILE_W"]))[0] if "TILE_W" in knobs
           else -(-geom.gemm_m // bm))
    return pix * -(-geom.k // bn) / 132


def main() -> None:
    sk = pd.read_csv(f"{HERE}/streamk_rows.csv.gz")
    train = read_sweep("data/sweeps/h100/train.csv")
    train = train[train["status"] == "ok"]
    print("# Stream-K TMA families against the persistent grid (H100, call 71)\n")
    print(f"{len(sk)} stream-K rows ({(sk['status'] == 'ok').mean():.0%} `ok`), "
          f"{sk['dtype'].value_counts().to_dict()}; GPU {sk['gpu'].iloc[0]}.\n")
    for pers, fam in PAIRS:
        a = train[train["family"] == pers].set_index(["problem_id", "config"])["latency_us"]
        b = sk[sk["family"] == fam].set_index(["problem_id", "config"])
        pair = b.join(a.astype(float).rename("pers"), how="inner")
        r = pair["pers"] / pair["latency_us"].astype(float)
        w = pair.reset_index().apply(waves, axis=1).to_numpy()
        print(f"## `{fam}` against `{pers}`, same config\n")
        print(f"{len(pair)} (problem, config) pairs: {gm(r):.3f}x, stream-K faster on "
              f"{(r > 1).mean():.1%} ({r.min():.2f}-{r.max():.2f}).\n")
        print("| waves of tiles on 132 SMs | pairs | persistent / stream-K | faster |")
        print("|---|---|---|---|")
        for lo, hi in zip(WAVES, WAVES[1:]):
            sel = (w > lo) & (w <= hi)
            if sel.any():
                print(f"| ({lo}, {hi}] | {int(sel.sum())} | {gm(r[sel]):.3f} | "
                      f"{(r[sel] > 1).mean():.0%} |")
        print()
    best_sk = sk.groupby("problem_id")["latency_us"].min()
    best_rest = train[train["problem_id"].isin(best_sk.index)].groupby(
        "problem_id")["latency_us"].min()
    r = (best_rest / best_sk).dropna()
    print("## Best stream-K config against the best row of every other family\n")
    print(f"{len(r)} problems: {gm(r):.3f}x; stream-K would be the fastest on "
          f"{(r > 1).sum()} ({(r > 1).mean():.1%}).\n")


if __name__ == "__main__":
    main()
