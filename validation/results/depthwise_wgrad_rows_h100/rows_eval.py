"""wgrad_depthwise_rows against the other wgrad families on the H100 depthwise sweeps.

    python validation/results/depthwise_wgrad_rows_h100/rows_eval.py > rows_eval.md

Over the depthwise problems of data/sweeps/h100/bwd_wgrad.csv: the family's best config
against the best config of every other family (geometric mean, problems it is faster
on), the best of all against cuDNN's gradient with and without it, and its best latency
per problem before (call 51, ``call51/rows_before_reduce_fix.csv.gz``: the reduction of
16 elements x 128 slices a step over few programs) and after (calls 53 and 55: every
slice of a block in one step over about 256 programs; call 55 added the 8-row tiles)
``reduce_splits`` changed; then the MobileNetV2 layers one by one.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from convdispatch.validation.sweep_csv import read_sweep

FAMILY = "wgrad_depthwise_rows"
HERE = Path(__file__).parent


def gm(values) -> float:
    return float(np.exp(np.log(np.asarray(values, dtype=float)).mean()))


def main() -> int:
    meta = json.loads(Path("data/sweeps/h100/bwd_wgrad.meta.json").read_text())
    sw = meta["software"]
    print(f"Sweep bwd_wgrad.csv: {meta['gpu']['name']}, driver {meta['gpu']['driver']}; torch "
          f"{sw['torch']}, triton {sw['triton']}, CUDA {sw['cuda']}, cuDNN {sw['cudnn']}. "
          "Command: `python validation/results/depthwise_wgrad_rows_h100/rows_eval.py`.\n")
    df = read_sweep("data/sweeps/h100/bwd_wgrad.csv")
    df = df[(df["status"] == "ok") & (df["g"] > 1) & (df["c"] == df["g"])]
    mine = df[df["family"] == FAMILY].groupby("problem_id")["latency_us"].min()
    other = df[df["family"] != FAMILY].groupby("problem_id")["latency_us"].min()
    ids = mine.index.intersection(other.index)
    cudnn = df.groupby("problem_id")["cudnn_us"].first()[ids]
    speed = other[ids] / mine[ids]
    best = np.minimum(mine[ids], other[ids])
    before = pd.read_csv(HERE / "call51" / "rows_before_reduce_fix.csv.gz")
    before = before[before["status"] == "ok"].groupby("problem_id")["latency_us"].min()
    print("| problems | best rows / best other (speedup geomean) | faster on | range | "
          "best of all vs cuDNN: without rows | with rows | rows alone vs cuDNN | "
          "rows: call 51 / calls 53+55 latency |")
    print("|---" * 8 + "|")
    print(f"| {len(ids)} | {gm(speed):.2f} | {int((speed > 1).sum())} | "
          f"{speed.min():.2f}-{speed.max():.2f} | {gm(cudnn / other[ids]):.2f} | "
          f"{gm(cudnn / best):.2f} | {gm(cudnn / mine[ids]):.2f} | "
          f"{gm(before[ids] / mine[ids]):.2f} |")
    print("\nMobileNetV2 (latency in us; x cuDNN = cuDNN / rows):\n")
    print("| problem | rows (calls 53+55) | rows (call 51) | best other | cuDNN | x cuDNN |")
    print("|---" * 6 + "|")
    for pid in sorted((i for i in ids if i.startswith("mobilenet_v2/")),
                      key=lambda i: (int(i.split("/n")[-1].split("/")[0]), i)):
        print(f"| {pid} | {mine[pid]:.1f} | {before.get(pid, float('nan')):.1f} | "
              f"{other[pid]:.1f} | {cudnn[pid]:.1f} | {cudnn[pid] / mine[pid]:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
