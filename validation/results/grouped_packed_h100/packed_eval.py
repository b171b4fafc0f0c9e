"""grouped_packed on the H100 sweep rows: L1_TAPS against 16-byte copies, and the rule
chooser's config pick with and without ``wide_packed_pays``.

    python validation/results/grouped_packed_h100/packed_eval.py

Per grouped_packed problem: the family's best latency with and without L1_TAPS (its
configs were swept in device call 29, the others in earlier calls); then, per plan, the
efficiency (the family's best / the picked config's latency, geomean) of the rule
chooser's config pick inside the family, with the WIDE_PACKED rule and with the measured
config order alone (L1_TAPS rows left out: the rule never takes them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from convdispatch.dispatcher import choosers
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.device import lookup
from convdispatch.kernels.geometry import ConvGeometry
from convdispatch.validation.sweep_csv import read_sweep

PLANS = {"train": "data/sweeps/h100/train.csv", "holdout": "data/sweeps/h100/holdout.csv"}
H100 = lookup("h100")


def packed_rows(path: str) -> pd.DataFrame:
    df = read_sweep(path)
    df = df[(df["status"] == "ok") & (df["family"] == "grouped_packed")]
    return df.assign(l1=df["config"].str.contains("L1_TAPS"))


def l1_table(df: pd.DataFrame) -> str:
    best = df.groupby(["problem_id", "l1"])["latency_us"].min().unstack().dropna()
    gain = best[False] / best[True]
    top = gain.sort_values(ascending=False).head(5)
    lines = [f"{len(gain)} problems: 16-byte best / L1_TAPS best geomean "
             f"{np.exp(np.log(gain).mean()):.3f}, L1_TAPS faster on {(gain > 1).sum()} "
             f"(max {gain.max():.2f}x, min {gain.min():.2f}x); largest gains:"]
    lines += [f"  {pid}: {g:.2f}x" for pid, g in top.items()]
    return "\n".join(lines)


def rule_pick(geom: ConvGeometry, cands: list[Candidate], wide: bool) -> str:
    saved = choosers.wide_packed_pays
    if not wide:
        choosers.wide_packed_pays = lambda g, d: False
    try:
        return str(choosers.RuleChooser().choose(geom, cands, H100).candidate.config)
    finally:
        choosers.wide_packed_pays = saved


def rule_table(df: pd.DataFrame) -> str:
    df = df[~df["l1"]]
    eff = {True: [], False: []}
    for _, rows in df.groupby("problem_id"):
        geom = ConvGeometry.from_row(rows.iloc[0])
        lat = dict(zip(rows["config"], rows["latency_us"]))
        cands = [Candidate("grouped_packed", Config.parse(c)) for c in lat]
        for wide in eff:
            eff[wide].append(min(lat.values()) / lat[rule_pick(geom, cands, wide)])
    gm = {w: float(np.exp(np.mean(np.log(v)))) for w, v in eff.items()}
    return (f"{len(eff[True])} problems: rule with wide_packed_pays {gm[True]:.3f} "
            f"(min {min(eff[True]):.3f}), measured order alone {gm[False]:.3f} "
            f"(min {min(eff[False]):.3f})")


def main() -> None:
    for plan, path in PLANS.items():
        df = packed_rows(path)
        print(f"## {plan}\n\nL1_TAPS:\n{l1_table(df)}\n\nconfig pick:\n{rule_table(df)}\n")
        rx = df[df["problem_id"].str.match(r"resnext50_32x4d/.*/n32/float16")]
        if len(rx):
            print(f"ResNeXt-50 batch 32 fp16 config pick: {rule_table(rx)}\n")


if __name__ == "__main__":
    main()
