"""The tables of README.md from this folder's files and the committed sweeps (CPU).

    python3 validation/results/flat_copy_runs_h100/derived.py > .../derived.md
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
SWEEPS = HERE.parents[2] / "data" / "sweeps" / "h100"
FAMILY = {"train": "grouped_flat", "holdout": "grouped_flat", "bwd_dgrad": "dgrad_grouped_flat",
          "bwd_wgrad": "wgrad_grouped_flat"}


def gm(x) -> float:
    return float(np.exp(np.log(np.asarray(x, dtype=float)).mean()))


def read(path) -> pd.DataFrame:
    d = pd.read_csv(path, low_memory=False)
    return d[d.ok == 1]


def best(d: pd.DataFrame) -> pd.Series:
    return d.groupby("problem_id").latency_us.min()


def versus(old: pd.DataFrame, new: pd.DataFrame) -> str:
    """Per config (old / new latency) and per problem (best old / best new)."""
    key = ["problem_id", "config"]
    m = new.merge(old[key + ["latency_us"]], on=key, suffixes=("", "_old"))
    per = m.latency_us_old / m.latency_us
    bo, bn = best(old), best(new)
    common = bo.index.intersection(bn.index)
    r = bo[common] / bn[common]
    return (f"| {len(m)} | {gm(per):.3f} | {len(common)} | {gm(r):.3f} | "
            f"{r.min():.2f}-{r.max():.2f} | {int((r > 1).sum())} |")


def main() -> None:
    print("# Derived tables (flat_copy_runs_h100)\n")
    print("Ratios are old latency / new (above 1: the change is faster). Best: a problem's "
          "fastest config of the family.\n")
    head = ("| change | configs | per config | problems | best of a problem | range | "
            "problems faster |\n|---|---|---|---|---|---|---|")

    print("## Warps across an item's positions (call 175, wgrad_grouped_flat)\n")
    print(head)
    before = read(HERE / "call176" / "bwd_wgrad_rows_whole_xp.csv.gz")
    lead = read(HERE / "call175" / "wgrad_rows_position_warps.csv.gz")
    for tile in ("BLOCK_N=16;SPLIT_K=\\d+;num_stages=2;num_warps=4",
                 "BLOCK_N=16;SPLIT_K=\\d+;num_stages=2;num_warps=8",
                 "BLOCK_N=32;SPLIT_K=\\d+;num_stages=2;num_warps=8"):
        new = lead[lead.config.str.contains(tile)]
        bo, bn = best(before), best(new)
        common = bo.index.intersection(bn.index)
        r = bo[common] / bn[common]
        name = tile.replace(";SPLIT_K=\\d+;num_stages=2", "")
        print(f"| {name}, against the 2- and 4-warp configs | {len(new)} | - | "
              f"{len(common)} | {gm(r):.3f} | {r.min():.2f}-{r.max():.2f} | "
              f"{int((r > 1).sum())} |")

    print("\n## Copy runs: XCOPY positions against the whole XP (calls 176 against 157-175)\n")
    print(head)
    for f, fam in FAMILY.items():
        old = read(HERE / "call176" / f"{f}_rows_whole_xp.csv.gz")
        new = read(SWEEPS / f"{f}.csv")
        print(f"| {f}: {fam} " + versus(old, new[new.family == fam]))

    print("\n## Kernel variants of grouped_flat and its dgrad twin (call 178)\n")
    v = pd.read_csv(HERE / "call178" / "variants.csv")
    v = v[v.ok == 1]
    v["layer"] = v.problem_id.str.split("/").str[1].str.replace(".conv2", "", regex=False)
    p = v.pivot_table(index=["layer", "direction", "candidate"], columns="variant", values="us")
    print("| variant | configs | per config (whole / variant) | best of a problem, each "
          "layer and direction |\n|---|---|---|---|")
    b = p.groupby(level=[0, 1]).min()
    for var in ("planes", "hoist", "planes_hoist"):
        per = (p.whole / p[var]).dropna()
        bests = ", ".join(f"{lay} {d} {b.whole[(lay, d)] / b[var][(lay, d)]:.2f}"
                          for lay, d in b.index)
        print(f"| {var} | {len(per)} | {gm(per):.3f} | {bests} |")

    print("\n## 32-wide packs in 16-wide diagonal halves (call 179)\n")
    print("| sweep | new rows | problems | family's best / halves' best | range | problems "
          "faster |\n|---|---|---|---|---|---|")
    for f in ("train", "holdout", "bwd_dgrad"):
        halves = read(HERE / "call179" / f"{f}_rows_halves.csv.gz")
        cur = read(SWEEPS / f"{f}.csv")
        fo, fn = best(cur[cur.family == FAMILY[f]]), best(halves)
        r = fo[fn.index] / fn
        print(f"| {f} | {len(halves)} | {len(r)} | {gm(r):.3f} | {r.min():.2f}-{r.max():.2f} "
              f"| {int((r > 1).sum())} |")


PREV = HERE.parent / "planar_flat_h100"


def bench(path: Path) -> pd.DataFrame:
    return pd.read_csv(path / "bench.csv")


def benches() -> None:
    """Calls 180-181 against the thirtieth session's calls 170, 171 and 173."""
    print("\n## Benchmarks (calls 180-181; before: calls 170-171 and 173)\n")
    print("| suite | category | layers | now | 170/171 | 173 | time now / 170-171: ours, cuDNN "
          "|\n|---|---|---|---|---|---|---|")
    runs = [("issue-2 one pass, overlapped", "call180/bwd_full", "call170/bwd_full",
             "call173/bwd_full", "speedup_vs_cudnn"),
            ("issue-2 one pass, in order", "call180/bwd_full", "call170/bwd_full",
             "call173/bwd_full", "in_order_speedup_vs_cudnn"),
            ("issue-6 fp16", "call180/issue6_fp16", "call170/issue6_fp16", None,
             "speedup_vs_cudnn"),
            ("issue-6 bf16", "call181/issue6_bf16", "call171/issue6_bf16", None,
             "speedup_vs_cudnn")]
    for name, now, before, b173, col in runs:
        dn, db = bench(HERE / now), bench(PREV / before)
        d3 = bench(PREV / b173) if b173 else None
        ours = ("in_order_us" if col.startswith("in_order")
                else "ours_us" if "ours_us" in dn else "call_us")
        for cat in ("dense", "grouped", "depthwise"):
            n = dn[dn.category == cat][col]
            b = db[db.category == cat][col]
            c = f"{gm(d3[d3.category == cat][col]):.3f}" if d3 is not None else "-"
            m = dn[dn.category == cat].merge(db, on="problem_id", suffixes=("", "_b"))
            print(f"| {name} | {cat} | {len(n)} | {gm(n):.3f} (min {n.min():.2f}) | "
                  f"{gm(b):.3f} | {c} | {gm(m[ours] / m[ours + '_b']):.3f}, "
                  f"{gm(m.cudnn_us / m.cudnn_us_b):.3f} |")
    for name, now in (("issue-6 fp16", "call180/issue6_fp16"),
                      ("issue-6 bf16", "call181/issue6_bf16")):
        d = bench(HERE / now)
        top = d.loc[d.tflops.idxmax()]
        print(f"\n{name}: highest rate {top.tflops:.0f} TFLOP/s, {top.problem_id}")
    print("\nGrouped layers, issue-2 one pass in order (us, ours / cuDNN, x cuDNN):\n")
    print("| layer | dgrad & wgrad | now | call 170 |\n|---|---|---|---|")
    dn, db = bench(HERE / "call180/bwd_full"), bench(PREV / "call170/bwd_full")
    for _, r in dn[dn.category == "grouped"].iterrows():
        o = db[db.problem_id == r.problem_id].iloc[0]
        fams = " & ".join(c.split(":")[0] for c in r.chosen.split(" & "))
        print(f"| {r.layer} | {fams} | {r.in_order_us:.1f} / {r.cudnn_us:.1f}, "
              f"x{r.in_order_speedup_vs_cudnn:.2f} | {o.in_order_us:.1f} / {o.cudnn_us:.1f}, "
              f"x{o.in_order_speedup_vs_cudnn:.2f} |")
    print("\nGrouped gradients each alone (call 181 against 171):\n")
    print("| direction | now | 171 | min now |\n|---|---|---|---|")
    dn, db = bench(HERE / "call181/bwd_grouped"), bench(PREV / "call171/bwd_grouped")
    for d in ("dgrad", "wgrad"):
        n, b = dn[dn.direction == d].speedup_vs_cudnn, db[db.direction == d].speedup_vs_cudnn
        print(f"| {d} | {gm(n):.3f} | {gm(b):.3f} | {n.min():.2f} |")


def reduce_pass() -> None:
    """Call 182: the grouped wgrad choices with and without their split reduction."""
    d = pd.read_csv(HERE / "call182" / "reduce.csv")
    print("\n## The split reduction pass of the grouped wgrad choices (call 182)\n")
    print("| layer | split | whole us | without the reduction | its share | x cuDNN whole | "
          "x cuDNN without |\n|---|---|---|---|---|---|---|")
    for _, r in d.iterrows():
        split = r.chosen.split("SPLIT_K=")[1].split(";")[0]
        print(f"| {r.problem_id.split('/')[1]} | {split} | {r.whole_us:.1f} | "
              f"{r.without_reduce_us:.1f} | {r.reduce_share:.0%} | "
              f"{r.cudnn_us / r.whole_us:.2f} | {r.cudnn_us / r.without_reduce_us:.2f} |")
    print(f"\nGeomean x cuDNN: {gm(d.cudnn_us / d.whole_us):.3f} whole, "
          f"{gm(d.cudnn_us / d.without_reduce_us):.3f} without the reduction (a bound on "
          "what a fused reduction could reach).")


if __name__ == "__main__":
    main()
    benches()
    reduce_pass()
