"""The TMA-box convolution families against the other families on the H100 sweeps.

    python validation/results/implicit_gemm_tma_h100/tma_eval.py

For each new family (forward ``implicit_gemm_tma``, its dgrad twin
``dgrad_implicit_gemm_tma``, ``wgrad_implicit_gemm_tma``), over the problems where it was
measured: its best config against the best config of every other family of that
direction, and the best measured kernel against cuDNN before and after it, by network;
geometric means. Forward also splits the problems by the rule that puts the family
first (``dispatcher.choosers.box_conv_pays``) and lists the rates on the largest layers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from convdispatch.dispatcher.choosers import box_conv_pays, preferred_families
from convdispatch.kernels.device import lookup
from convdispatch.validation.sweep_csv import read_sweep, row_geometry, sweep_provenance

SWEEPS = "data/sweeps/h100"
CASES = (("forward", "implicit_gemm_tma", ("train", "holdout")),
         ("dgrad", "dgrad_implicit_gemm_tma", ("bwd_dgrad",)),
         ("wgrad", "wgrad_implicit_gemm_tma", ("bwd_wgrad",)))


def gm(s: pd.Series) -> float:
    return float(np.exp(np.log(s).mean()))


def compare(df: pd.DataFrame, family: str) -> pd.DataFrame:
    """Per problem: best of ``family``, best of the others, cuDNN, the first row."""
    df = df[df["status"] == "ok"]
    on = df[df["problem_id"].isin(set(df.loc[df["family"] == family, "problem_id"]))]
    mine = on["family"] == family
    out = pd.DataFrame({"new": on[mine].groupby("problem_id")["latency_us"].min(),
                        "old": on[~mine].groupby("problem_id")["latency_us"].min()}).dropna()
    first = on.groupby("problem_id").first().loc[out.index]
    out["cudnn"] = first["cudnn_us"]
    out["set"] = first["set"]
    out["first"] = [first.loc[i] for i in out.index]
    return out


def table(rows: pd.DataFrame, label: str) -> str:
    gain = rows["old"] / rows["new"]
    return (f"| {label} | {len(rows)} | {gm(gain):.2f}x | {(gain > 1).sum()} | "
            f"{gain.min():.2f} | {gm(rows['cudnn'] / rows['old']):.3f} | "
            f"{gm(rows['cudnn'] / np.minimum(rows['old'], rows['new'])):.3f} |")


LARGEST = 12


def rates(df: pd.DataFrame, rows: pd.DataFrame, family: str) -> str:
    """TFLOP/s of the best ``family`` config, the best other config and cuDNN."""
    ok = df[df["status"] == "ok"]
    flops = ok.groupby("problem_id")["tflops"].first() * ok.groupby("problem_id")[
        "latency_us"].first()  # TFLOP/s x us: the problem's work
    out = ["| problem | new | others' best | cuDNN |", "|---|---|---|---|"]
    for pid, r in rows.iterrows():
        out.append(f"| {pid} | {flops[pid] / r['new']:.0f} | {flops[pid] / r['old']:.0f} | "
                   f"{flops[pid] / r['cudnn']:.0f} |")
    return "\n".join(out)


def main() -> int:
    h100 = lookup("h100")
    head = ("| problems | count | new best faster by (geomean) | new faster on | min | "
            "best vs cuDNN: before | after |\n" + "|---" * 7 + "|")
    for direction, family, names in CASES:
        df = pd.concat([read_sweep(f"{SWEEPS}/{n}.csv") for n in names], ignore_index=True)
        rows = compare(df, family)
        print(f"## {direction}: {family}\n\nSweeps: {sweep_provenance(SWEEPS, names)}."
              f"\n\n{head}")
        for name, part in rows.groupby("set"):
            print(table(part, name))
        print(table(rows, "all"))
        if direction == "forward":
            first = [box_conv_pays(row_geometry(r), h100)
                     and preferred_families(row_geometry(r), h100)[0][0] == family
                     for r in rows["first"]]
            ruled = pd.Series(first, index=rows.index)
            print(table(rows[ruled], "rule puts it first"))
            print(table(rows[~ruled], "rule does not"))
            print(f"\n{LARGEST} layers with the longest cuDNN time, TFLOP/s:\n")
            print(rates(df, rows.nlargest(LARGEST, "cudnn"), family))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
