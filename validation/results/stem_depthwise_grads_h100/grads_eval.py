"""The stem and depthwise gradient families against the earlier ones on the H100 sweeps.

    python validation/results/stem_depthwise_grads_h100/grads_eval.py

For each new family (``dgrad_stem``, ``wgrad_stem``, ``wgrad_depthwise_taps``), over the
problems where it was measured: its best config against the best config of every other
family of that direction, and the best measured kernel against cuDNN's gradient before
and after it was added (geometric means); then the problems one by one. Last,
``wgrad_direct``'s best latency per problem before (commit 6a1bd60, the earlier split
reduction) and after (call 49, four slices in flight) ``reduce_splits`` changed.
"""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
from convdispatch.validation.sweep_csv import read_sweep

NEW = {"dgrad": ("dgrad_stem",), "wgrad": ("wgrad_stem", "wgrad_depthwise_taps")}
# The last commit whose bwd_wgrad.csv holds wgrad_direct's rows of the earlier reduction.
BEFORE_REDUCE = "6a1bd60"


def gm(values) -> float:
    return float(np.exp(np.log(np.asarray(values, dtype=float)).mean()))


def provenance(direction: str) -> str:
    meta = json.loads(Path(f"data/sweeps/h100/bwd_{direction}.meta.json").read_text())
    sw = meta["software"]
    return (f"bwd_{direction}.csv: {meta['gpu']['name']}, driver {meta['gpu']['driver']}; "
            f"torch {sw['torch']}, triton {sw['triton']}, CUDA {sw['cuda']}, "
            f"cuDNN {sw['cudnn']}")


def main() -> int:
    print("Sweeps: " + "; ".join(provenance(d) for d in NEW) + ". Command: "
          "`python validation/results/stem_depthwise_grads_h100/grads_eval.py`.\n")
    print("| family | problems | best new / best earlier (speedup geomean) | faster on | "
          "range | best of all vs cuDNN: before | after |")
    print("|---" * 7 + "|")
    rows = []
    for direction, fams in NEW.items():
        df = read_sweep(f"data/sweeps/h100/bwd_{direction}.csv")
        df = df[df["status"] == "ok"]
        for fam in fams:
            probs = sorted(set(df.loc[df["family"] == fam, "problem_id"]))
            on = df[df["problem_id"].isin(probs)]
            mine = on[on["family"] == fam].groupby("problem_id")["latency_us"].min()
            other = on[~on["family"].isin(fams)].groupby("problem_id")["latency_us"].min()
            ids = mine.index.intersection(other.index)
            if len(ids) == 0:
                continue
            cudnn = on.groupby("problem_id")["cudnn_us"].first()
            after = np.minimum(mine[ids], other[ids])
            ratio = other[ids] / mine[ids]
            print(f"| {fam} | {len(ids)} | {gm(ratio):.2f}x | {(ratio > 1).sum()} | "
                  f"{ratio.min():.2f}-{ratio.max():.2f} | {gm(cudnn[ids] / other[ids]):.2f} "
                  f"| {gm(cudnn[ids] / after):.2f} |")
            rows += [(fam, p, other[p], mine[p], cudnn[p]) for p in ids]
    print("\n| family | problem | best earlier (us) | best new (us) | cuDNN (us) | "
          "new vs cuDNN |")
    print("|---" * 6 + "|")
    for fam, p, before, new, cudnn in rows:
        print(f"| {fam} | {p} | {before:.1f} | {new:.1f} | {cudnn:.1f} | {cudnn / new:.2f} |")
    old = pd.read_csv(io.StringIO(subprocess.run(
        ["git", "show", f"{BEFORE_REDUCE}:data/sweeps/h100/bwd_wgrad.csv"],
        capture_output=True, text=True, check=True).stdout))
    new = read_sweep("data/sweeps/h100/bwd_wgrad.csv")
    best = [d[(d["family"] == "wgrad_direct") & (d["status"] == "ok")]
            .groupby("problem_id")["latency_us"].min() for d in (old, new)]
    ids = best[0].index.intersection(best[1].index)
    ratio = best[0][ids] / best[1][ids]
    print(f"\nwgrad_direct, best config per problem, earlier reduction / four slices in "
          f"flight: {gm(ratio):.3f}x geomean over {len(ids)} problems "
          f"({ratio.min():.2f}-{ratio.max():.2f}).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
