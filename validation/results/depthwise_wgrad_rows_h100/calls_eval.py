"""Numbers the READMEs and the rule chooser quote, from committed data.

    python validation/results/depthwise_wgrad_rows_h100/calls_eval.py > calls_eval.md

1. Call 54's probe (``call54/probe_variants.csv``): per MobileNetV2 layer, the best of
   the two best swept ``wgrad_depthwise_rows`` tiles against the best of the same tiles
   made 8 output rows high (the 8-row tiles added afterwards).
2. Call 59 (``validation/gpu/call59.sh``): each re-measured family's best latency per
   problem in bwd_wgrad.csv before it (commit 7da4a18) and after (the current CSV).
3. ``wgrad_grouped_taps`` against the best of the other families in the current CSV,
   split by channels a group (the larger of in and out) at the rule chooser's bounds
   (``dispatcher.choosers.GROUPED_TAPS_CHANNELS``).
"""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
from convdispatch.dispatcher.choosers import GROUPED_TAPS_CHANNELS

HERE = Path(__file__).parent
BEFORE_CALL59 = "7da4a18"
CSV = "data/sweeps/h100/bwd_wgrad.csv"
REMEASURED = ("wgrad_direct", "wgrad_depthwise_taps", "wgrad_stem", "wgrad_packed")


def gm(values) -> float:
    return float(np.exp(np.log(np.asarray(values, dtype=float)).mean()))


def rows_of(cfg: str) -> int:
    kv = dict(part.split("=") for part in cfg.split(";"))
    return int(kv["BLOCK_M"]) // int(kv["TILE_W"])


def main() -> int:
    env = (HERE / "call54" / "env.txt").read_text().strip().splitlines()[-1]
    print(f"Call 54 (`validation/gpu/call54.sh`; {env}): best 8-row variant over the best "
          "swept tile (4 rows or fewer), MobileNetV2 batch 32, fp16.\n")
    print("| layer | stride | best swept us | best 8-row us | speedup |")
    print("|---|---|---|---|---|")
    probe = pd.read_csv(HERE / "call54" / "probe_variants.csv")
    probe = probe[probe["config"].map(lambda c: "SPLIT_K=1024" not in c)]
    eight = probe["config"].map(rows_of) == 8
    base = probe[~eight].groupby("problem_id")["us"].min()
    tall = probe[eight].groupby("problem_id")["us"].min()
    for pid in base.index:
        stride = 2 if any(f"features.{i}.conv" in pid for i in (2, 4, 7, 14)) else 1
        print(f"| {pid} | {stride} | {base[pid]:.1f} | {tall[pid]:.1f} | "
              f"{base[pid] / tall[pid]:.3f} |")
    meta = json.loads(Path(CSV.replace(".csv", ".meta.json")).read_text())
    sw = meta["software"]
    print(f"\nCall 59 (`validation/gpu/call59.sh`; {meta['gpu']['name']}, torch {sw['torch']}, "
          f"triton {sw['triton']}): best latency per problem, earlier rows (commit "
          f"{BEFORE_CALL59}) / call 59's, geomean over the problems both measured.\n")
    print("| family | problems | earlier / now | range |")
    print("|---|---|---|---|")
    old = pd.read_csv(io.StringIO(subprocess.run(
        ["git", "show", f"{BEFORE_CALL59}:{CSV}"], capture_output=True, text=True,
        check=True).stdout), low_memory=False)
    new = pd.read_csv(CSV, low_memory=False)
    for fam in REMEASURED:
        a, b = (d[(d["family"] == fam) & (d["status"] == "ok")].groupby("problem_id")
                ["latency_us"].min() for d in (old, new))
        ids = a.index.intersection(b.index)
        r = a[ids] / b[ids]
        print(f"| {fam} | {len(ids)} | {gm(r):.2f} | {r.min():.2f}-{r.max():.2f} |")
    lo, hi = GROUPED_TAPS_CHANNELS
    ok = new[new["status"] == "ok"]
    ok = ok[ok["problem_id"].isin(set(ok.loc[ok["family"] == "wgrad_grouped_taps",
                                             "problem_id"]))]
    mine = ok[ok["family"] == "wgrad_grouped_taps"].groupby("problem_id")["latency_us"].min()
    other = ok[ok["family"] != "wgrad_grouped_taps"].groupby("problem_id")["latency_us"].min()
    first = ok.groupby("problem_id")[["c", "k", "g"]].first()
    per_group = np.maximum(first["c"] // first["g"], first["k"] // first["g"])
    inside = (per_group >= lo) & (per_group <= hi)
    print("\n`wgrad_grouped_taps` (current CSV): best of the other families / its best, by "
          "channels a group.\n")
    print("| channels a group | problems | it is faster on | geomean |")
    print("|---|---|---|---|")
    for label, sel in ((f"{lo} to {hi}", inside), ("other", ~inside)):
        ids = per_group.index[sel]
        r = other[ids] / mine[ids]
        print(f"| {label} | {len(ids)} | {int((r > 1).sum())} | {gm(r):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
