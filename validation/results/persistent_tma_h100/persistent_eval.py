"""The persistent TMA families and strided phase boxes against the other forward families
on the H100 sweeps.

    python validation/results/persistent_tma_h100/persistent_eval.py > \
        validation/results/persistent_tma_h100/persistent_eval.md

Persistent: ``pointwise_tma_persistent`` and ``implicit_gemm_tma_persistent`` run the
same configs as ``pointwise_tma`` and ``implicit_gemm_tma``, so each config is compared
with itself (one program a tile against a persistent grid), then each problem's best
config of one family against the other's, the best of all families without and with
the persistent one, and both against cuDNN; by network, for the problems the rules send
to the family (``choosers.tma_pays``, ``choosers.box_conv_pays``), and on the layers
with the longest cuDNN time. Strided: ``implicit_gemm_tma`` and its persistent twin on
strided 2D layers (phase boxes) against every other family there. Geometric means.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from convdispatch.dispatcher.choosers import box_conv_pays, tma_pays
from convdispatch.kernels.device import lookup
from convdispatch.validation.sweep_csv import read_sweep, row_geometry, sweep_provenance

SWEEPS = "data/sweeps/h100"
PAIRS = (("pointwise_tma", "pointwise_tma_persistent", tma_pays),
         ("implicit_gemm_tma", "implicit_gemm_tma_persistent", box_conv_pays))
BOX = ("implicit_gemm_tma", "implicit_gemm_tma_persistent")


def gm(s) -> float:
    return float(np.exp(np.log(np.asarray(s, dtype=float)).mean()))


def table(rows: list[dict]) -> str:
    if not rows:
        return "(none)\n"
    cols = list(rows[0])
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v)
                                     for v in r.values()) + " |")
    return "\n".join(out) + "\n"


def main() -> None:
    names = ("train", "holdout")
    df = pd.concat([read_sweep(f"{SWEEPS}/{n}.csv") for n in names], ignore_index=True)
    df = df[(df["status"] == "ok") & (df["dtype"] == "float16")]
    df["latency_us"] = df["latency_us"].astype(float)
    df["cudnn_us"] = df["cudnn_us"].astype(float)
    h100 = lookup("h100")
    first = df.groupby("problem_id").first()
    best = df.groupby(["problem_id", "family"])["latency_us"].min().unstack()
    cudnn = df.groupby("problem_id")["cudnn_us"].median()
    # TFLOP/s x us = MFLOP; MFLOP / us = TFLOP/s
    flops = df.groupby("problem_id")["tflops"].first().astype(float) * \
        df.groupby("problem_id")["latency_us"].first()
    print("# Persistent TMA families and strided phase boxes (H100, float16)\n")
    print(f"Sweeps: {sweep_provenance(SWEEPS, names)}. Rows: every `ok` float16 row. "
          "Ratios are "
          "geometric means of latency ratios (> 1: the second named is faster).\n")
    for one, pers, rule in PAIRS:
        a = df[df["family"] == one].set_index(["problem_id", "config"])["latency_us"]
        b = df[df["family"] == pers].set_index(["problem_id", "config"])["latency_us"]
        pair = pd.concat([a.rename("one"), b.rename("pers")], axis=1).dropna()
        probs = best[[one, pers]].dropna().index
        others = best.drop(columns=[pers]).loc[probs].min(axis=1)
        with_p = best.loc[probs].min(axis=1)
        ruled = [p for p in probs if rule(row_geometry(first.loc[p]), h100)]
        print(f"## `{pers}` against `{one}`\n")
        print(f"- same config, {len(pair)} (problem, config) pairs: "
              f"{gm(pair.one / pair.pers):.3f}x, persistent faster on "
              f"{(pair.one > pair.pers).mean():.0%}")
        r = best.loc[probs, one] / best.loc[probs, pers]
        print(f"- best config against best config, {len(probs)} problems: {gm(r):.3f}x "
              f"(faster on {(r > 1).mean():.0%}, {r.min():.2f}-{r.max():.2f}); on the "
              f"{len(ruled)} the rule `{rule.__name__}` takes: {gm(r[ruled]):.3f}x "
              f"(faster on {(r[ruled] > 1).mean():.0%})")
        print(f"- best of all families without / with it: {gm(others / with_p):.3f}x; "
              f"against cuDNN {gm(cudnn[probs] / others):.3f} -> "
              f"{gm(cudnn[probs] / with_p):.3f}\n")
        by_set = []
        for name, idx in pd.Series(probs, index=probs).groupby(lambda p: p.split("/")[0]):
            idx = list(idx.index)
            by_set.append({"network": name, "problems": len(idx),
                           "best persistent / best one-tile": gm(r[idx]),
                           "best of all vs cuDNN before": gm(cudnn[idx] / others[idx]),
                           "after": gm(cudnn[idx] / with_p[idx])})
        print(table(by_set))
        top = cudnn[probs].sort_values(ascending=False).index[:15]
        print("Longest cuDNN times among them (TFLOP/s of each best config):\n")
        print(table([{"problem": p, "one-tile us": best.loc[p, one],
                      "persistent us": best.loc[p, pers], "cuDNN us": cudnn[p],
                      "persistent TFLOP/s": flops[p] / best.loc[p, pers],
                      "cuDNN TFLOP/s": flops[p] / cudnn[p],
                      "persistent x cuDNN": cudnn[p] / best.loc[p, pers]} for p in top]))
    boxed = [p for p in best.index if int(first.loc[p, "stride_h"]) > 1
             and best.loc[p, list(BOX)].notna().any()]
    # Some problems were swept with the box families only (no other family's rows).
    strided = [p for p in boxed if best.drop(columns=list(BOX)).loc[p].notna().any()]
    print("## Strided 2D layers: phase boxes\n")
    print(f"{len(boxed)} strided problems have box rows; {len(boxed) - len(strided)} of them "
          "have no other family's rows and are left out here.\n")
    if strided:
        box = best.loc[strided, list(BOX)].min(axis=1)
        rest = best.drop(columns=list(BOX)).loc[strided].min(axis=1)
        allb = best.loc[strided].min(axis=1)
        r = rest / box
        print(f"{len(strided)} problems. Best of the two box families against the best of "
              f"the others: {gm(r):.3f}x (faster on {(r > 1).mean():.0%}, "
              f"{r.min():.2f}-{r.max():.2f}); best of all against cuDNN "
              f"{gm(cudnn[strided] / rest):.3f} -> {gm(cudnn[strided] / allb):.3f}.\n")
        rows = []
        for p in sorted(strided, key=lambda p: -cudnn[p]):
            g = first.loc[p]
            rows.append({"problem": p, "filter": f"{g['r']}x{g['s']}",
                         "one-tile": best.loc[p, BOX[0]], "persistent": best.loc[p, BOX[1]],
                         "best other": rest[p],
                         "other family": best.drop(columns=list(BOX)).loc[p].idxmin(),
                         "cuDNN": cudnn[p], "best x cuDNN": cudnn[p] / allb[p]})
        print(table(rows))
    else:
        print("(no strided rows yet)\n")


if __name__ == "__main__":
    main()
