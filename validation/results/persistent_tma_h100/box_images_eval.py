"""Boxes of several images (``implicit_gemm_tma.box_images``): the same configs before
(one image a box, rows set aside in ``one_image_rows.csv.gz``) and after (call 67's rows
in data/sweeps/h100/train.csv), on the H100.

    python validation/results/persistent_tma_h100/box_images_eval.py > \
        validation/results/persistent_tma_h100/box_images_eval.md

Per family: the same (problem, config) timed both ways; then each problem's best config
of the two box families before and after, the best of all families before and after,
and both against cuDNN; by output map size. Geometric means (> 1: after is faster).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from convdispatch.validation.sweep_csv import read_sweep, sweep_provenance

HERE = Path(__file__).parent
SWEEPS = "data/sweeps/h100"
BOX = ("implicit_gemm_tma", "implicit_gemm_tma_persistent")
KEY = ["problem_id", "family", "config"]


def gm(s) -> float:
    return float(np.exp(np.log(np.asarray(s, dtype=float)).mean()))


def main() -> None:
    before = pd.read_csv(HERE / "one_image_rows.csv.gz", dtype=str, keep_default_na=False)
    before = before[before["status"] == "ok"]
    now = read_sweep(f"{SWEEPS}/train.csv")
    now = now[now["status"] == "ok"]
    for df in (before, now):
        df["latency_us"] = df["latency_us"].astype(float)
        df["cudnn_us"] = df["cudnn_us"].astype(float)
    print("# Boxes of several images (H100)\n")
    print(f"Sweeps: {sweep_provenance(SWEEPS, ['train'])}; before: `one_image_rows.csv.gz` "
          "(the same file's rows before call 67). Every `ok` row.\n")
    pair = before.set_index(KEY)["latency_us"].rename("before").to_frame().join(
        now.set_index(KEY)["latency_us"].rename("after"), how="inner")
    for fam in BOX:
        p = pair.xs(fam, level="family")
        r = p["before"] / p["after"]
        print(f"- `{fam}`, the same config: {len(p)} (problem, config) pairs, {gm(r):.3f}x "
              f"(faster on {(r > 1).mean():.0%}, {r.min():.2f}-{r.max():.2f})")
    probs = sorted(set(before["problem_id"]))
    on = now[now["problem_id"].isin(probs)]
    after_box = on[on["family"].isin(BOX)].groupby("problem_id")["latency_us"].min()
    before_box = before.groupby("problem_id")["latency_us"].min()
    others = on[~on["family"].isin(BOX)].groupby("problem_id")["latency_us"].min()
    cudnn = on.groupby("problem_id")["cudnn_us"].median()
    best_before = pd.concat([before_box, others], axis=1).min(axis=1)
    best_after = pd.concat([after_box, others], axis=1).min(axis=1)
    r = before_box / after_box
    print(f"- each problem's best box config, {len(probs)} problems: {gm(r):.3f}x "
          f"(faster on {(r > 1).mean():.0%}); best of all families "
          f"{gm(best_before / best_after):.3f}x; against cuDNN {gm(cudnn / best_before):.3f} "
          f"-> {gm(cudnn / best_after):.3f}\n")
    first = on.groupby("problem_id").first()
    oh = ((first["h"].astype(int) + 2 * first["pad_h"].astype(int)
           - first["dil_h"].astype(int) * (first["r"].astype(int) - 1) - 1)
          // first["stride_h"].astype(int) + 1)
    rows = []
    for size, idx in oh.groupby(oh):
        ids = list(idx.index)
        rows.append(f"| {size} | {len(ids)} | {gm(r[ids]):.3f} "
                    f"| {gm(cudnn[ids] / best_before[ids]):.3f} "
                    f"| {gm(cudnn[ids] / best_after[ids]):.3f} |")
    print("| output rows | problems | best box config after / before "
          "| best of all vs cuDNN before | after |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
