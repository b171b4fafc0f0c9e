"""The new gradient families against the earlier ones on the H100 gradient sweeps.

    python validation/results/grad_twins_h100/twin_eval.py

dgrad: over the problems where a ``dgrad_<forward family>`` twin (kernels/dgrad_forward.py)
was measured, the best twin config against the best config of the native dgrad families
(dgrad_gemm, dgrad_packed, dgrad_direct), and the best measured kernel against cuDNN's
dgrad with and without the twins. wgrad: the same for ``wgrad_pointwise_tma`` against
``wgrad_gemm`` on 1x1 stride-1 problems. Categories as in the benchmarks (dense, grouped,
depthwise); geometric means.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from convdispatch.validation.sweep_csv import read_sweep

NATIVE = {"dgrad": ("dgrad_gemm", "dgrad_packed", "dgrad_direct"),
          "wgrad": ("wgrad_gemm", "wgrad_packed", "wgrad_direct")}
NEW = {"dgrad": lambda f: f not in NATIVE["dgrad"] and f != "dgrad_depthwise",
       "wgrad": lambda f: f == "wgrad_pointwise_tma"}


def gm(s: pd.Series) -> float:
    return float(np.exp(np.log(s).mean()))


def category(row) -> str:
    if row["g"] == 1:
        return "dense"
    return "depthwise" if row["c"] == row["g"] else "grouped"


def provenance() -> str:
    """GPU and software of the sweeps, from their sidecars."""
    lines = []
    for direction in ("dgrad", "wgrad"):
        meta = json.loads(Path(f"data/sweeps/h100/bwd_{direction}.meta.json").read_text())
        sw = meta["software"]
        lines.append(f"bwd_{direction}.csv: {meta['gpu']['name']}, driver "
                     f"{meta['gpu']['driver']}; torch {sw['torch']}, triton {sw['triton']}, "
                     f"CUDA {sw['cuda']}, cuDNN {sw['cudnn']}")
    return "; ".join(lines)


def main() -> int:
    print(f"Sweeps: {provenance()}. Command: "
          "`python validation/results/grad_twins_h100/twin_eval.py`.\n")
    print("| direction | category | problems | new best faster by (geomean) | new faster on "
          "| best of all vs cuDNN: before | after |")
    print("|---" * 7 + "|")
    for direction in ("dgrad", "wgrad"):
        df = read_sweep(f"data/sweeps/h100/bwd_{direction}.csv")
        df = df[df["status"] == "ok"]
        probs = set(df.loc[df["family"].map(NEW[direction]), "problem_id"])
        on = df[df["problem_id"].isin(probs)]
        is_new = on["family"].map(NEW[direction])
        first = on.groupby("problem_id").first()
        cats = first.apply(category, axis=1)
        new_best = on[is_new].groupby("problem_id")["latency_us"].min()
        before = on[~is_new].groupby("problem_id")["latency_us"].min()
        after = on.groupby("problem_id")["latency_us"].min()
        cudnn = first["cudnn_us"]
        for cat in ("dense", "grouped", "depthwise"):
            ids = cats.index[cats == cat].intersection(before.index).intersection(new_best.index)
            if len(ids) == 0:
                continue
            ratio = before[ids] / new_best[ids]
            print(f"| {direction} | {cat} | {len(ids)} | {gm(ratio):.2f}x | {(ratio > 1).sum()} "
                  f"| {gm(cudnn[ids] / before[ids]):.3f} | {gm(cudnn[ids] / after[ids]):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
