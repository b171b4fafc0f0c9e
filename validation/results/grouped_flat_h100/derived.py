"""The README's numbers that combine committed files (CPU; no GPU needed).

    cd validation/results/grouped_flat_h100 && python derived.py > derived.md

Each comes from committed benchmark CSVs (every bench.md beside them names the GPU, the
versions and the command).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
RES = HERE.parent
ROOT = HERE.parents[2]
C139 = RES / "grouped_halo_h100/call139"
C156 = RES / "depthwise_wgrad_span_h100/call156"
CATS = ("dense", "grouped", "depthwise")


def gmean(x) -> float:
    return float(np.exp(np.log(np.asarray(x, dtype=float)).mean()))


def bench(path: Path) -> pd.DataFrame:
    return pd.read_csv(path)


def forward_suite() -> None:
    print("## Issue-6 forward suite (call 139, forward model 017df4b7a444 -> calls 162-163, "
          "42a376052f30)\n")
    print("| dtype | category | layers | call 139 | now | min now |")
    print("|---|---|---|---|---|---|")
    for dtype, new in (("fp16", HERE / "call162/issue6_fp16/bench.csv.gz"),
                       ("bf16", HERE / "call163/issue6_bf16/bench.csv.gz")):
        old, now = bench(C139 / f"issue6_{dtype}/bench.csv.gz"), bench(new)
        for cat in CATS:
            o, n = old[old.category == cat], now[now.category == cat]
            print(f"| {dtype} | {cat} | {len(n)} | {gmean(o.speedup_vs_cudnn):.3f} | "
                  f"{gmean(n.speedup_vs_cudnn):.3f} | {n.speedup_vs_cudnn.min():.2f} |")
    for dtype, new in (("fp16", HERE / "call162/issue6_fp16/bench.csv.gz"),
                       ("bf16", HERE / "call163/issue6_bf16/bench.csv.gz")):
        now = bench(new)
        top = now.loc[now.tflops.idxmax()]
        flat = now[now.chosen.str.startswith("grouped_flat")]
        print(f"\n{dtype}: lowest layer {now.speedup_vs_cudnn.min():.2f}x cuDNN; highest rate "
              f"{top.tflops:.0f} TFLOP/s ({top.problem_id}); grouped_flat chosen on "
              f"{len(flat)} layers: " + ", ".join(
                  f"{r.problem_id} {r.speedup_vs_cudnn:.2f}x" for r in flat.itertuples()))


def backward_suite() -> None:
    print("\n## Issue-2 backward suite, one whole pass (call 156 -> call 162)\n")
    old, now = bench(C156 / "bwd_full/bench.csv"), bench(HERE / "call162/bwd_full/bench.csv")
    m = now.merge(old, on="problem_id", suffixes=("", "_o"))
    print("| category | layers | overlapped 156 -> 162 | in order 156 -> 162 | "
          "ours overlapped, time ratio | ours in order, time ratio | cuDNN, time ratio |")
    print("|---|---|---|---|---|---|---|")
    for cat in CATS:
        x = m[m.category == cat]
        print(f"| {cat} | {len(x)} | {gmean(x.speedup_vs_cudnn_o):.2f} -> "
              f"{gmean(x.speedup_vs_cudnn):.2f} | {gmean(x.in_order_speedup_vs_cudnn_o):.2f} -> "
              f"{gmean(x.in_order_speedup_vs_cudnn):.2f} | {gmean(x.ours_us / x.ours_us_o):.3f} | "
              f"{gmean(x.in_order_us / x.in_order_us_o):.3f} | "
              f"{gmean(x.cudnn_us / x.cudnn_us_o):.3f} |")
    print("\nGrouped layers (us; ours overlapped / in order, cuDNN's one pass):\n")
    print("| layer | dgrad & wgrad now | 156 ov / io | 162 ov / io | cuDNN 156 / 162 | "
          "x 162 ov / io |")
    print("|---|---|---|---|---|---|")
    for r in m[m.category == "grouped"].itertuples():
        fams = " & ".join(p.split(":")[0] for p in r.chosen.split(" & "))
        print(f"| {r.problem_id.split('/')[1]} | {fams} | {r.ours_us_o:.1f} / "
              f"{r.in_order_us_o:.1f} | {r.ours_us:.1f} / {r.in_order_us:.1f} | "
              f"{r.cudnn_us_o:.1f} / {r.cudnn_us:.1f} | {r.speedup_vs_cudnn:.2f} / "
              f"{r.in_order_speedup_vs_cudnn:.2f} |")


def overlap() -> None:
    print("\n## Overlapped or in order (call 162)\n")
    print("| suite | category | layers | overlapped | in order | better of the two a layer | "
          "in order faster on |")
    print("|---|---|---|---|---|---|---|")
    for name, path in (("issue2", "bwd_full"), ("issue6 grouped", "bwd_full_grouped6")):
        d = bench(HERE / f"call162/{path}/bench.csv")
        for cat in CATS:
            x = d[d.category == cat]
            if not len(x):
                continue
            ov, io = x.speedup_vs_cudnn, x.in_order_speedup_vs_cudnn
            print(f"| {name} | {cat} | {len(x)} | {gmean(ov):.2f} | {gmean(io):.2f} | "
                  f"{gmean(np.maximum(ov, io)):.2f} | {(io > ov).sum()} |")
    d = bench(HERE / "call162/bwd_full_grouped6/bench.csv")
    both = d[d.chosen.str.count("grouped_flat") == 2]
    print("\nBoth gradients on flat-grid kernels (issue-6 grouped run): " + ", ".join(
        f"{r.problem_id.split('/')[1]} {r.ours_us:.1f} / {r.in_order_us:.1f} us"
        for r in both.itertuples()) + " (overlapped / in order).")


def in_order_where_both_flat() -> None:
    d = bench(HERE / "call162/bwd_full/bench.csv")
    x = d[d.category == "grouped"]
    both = x.chosen.str.count("grouped_flat") == 2
    pick = np.where(both, x.in_order_speedup_vs_cudnn, x.speedup_vs_cudnn)
    print(f"\nIssue-2 grouped one pass if the {int(both.sum())} layers whose gradients both run "
          f"on flat-grid kernels ran in order and the rest overlapped (call 162's times): "
          f"{gmean(pick):.2f}x cuDNN (overlapped {gmean(x.speedup_vs_cudnn):.2f}, in order "
          f"{gmean(x.in_order_speedup_vs_cudnn):.2f}).")


def call158() -> None:
    print("\n## Call 158's first grouped_flat (one item a program; rows not kept in the "
          "sweeps, `call158/flat_rows_v1.csv.gz`)\n")
    v1 = pd.read_csv(HERE / "call158/flat_rows_v1.csv.gz", low_memory=False)
    v1 = v1[(v1.ok == 1) & v1.problem_id.str.startswith("resnext50_32x4d")
            & (v1.c // v1.g == 32)]
    print("ResNeXt-50's 32-channel groups, the best other kernel's sweep time over the "
          "first version's best:\n")
    print("| sweep | problem | first version us | best other us | others / it |")
    print("|---|---|---|---|---|")
    ratios = []
    for sweep, rows in v1.groupby("sweep"):
        ref = pd.read_csv(ROOT / f"data/sweeps/h100/{sweep}.csv", low_memory=False)
        ref = ref[(ref.ok == 1) & ~ref.family.str.endswith("grouped_flat")]
        for pid, r in rows.groupby("problem_id"):
            other = ref[ref.problem_id == pid].latency_us.min()
            ratios.append(other / r.latency_us.min())
            print(f"| {sweep} | {pid} | {r.latency_us.min():.1f} | {other:.1f} | "
                  f"{ratios[-1]:.2f} |")
    print(f"\nRange {min(ratios):.2f}-{max(ratios):.2f}.")


def per_direction() -> None:
    print("\n## Issue-2 grouped layers, each gradient alone (call 164; call 156's wgrad)\n")
    now = bench(HERE / "call164/bwd_grouped/bench.csv")
    old = bench(C156 / "bwd_wgrad/bench.csv")
    old = old[old.category == "grouped"]
    for direction in ("dgrad", "wgrad"):
        x = now[now.direction == direction]
        print(f"- {direction}: {gmean(x.speedup_vs_cudnn):.2f}x cuDNN (min "
              f"{x.speedup_vs_cudnn.min():.2f})" + (
                  f"; call 156: {gmean(old.speedup_vs_cudnn):.2f}x (min "
                  f"{old.speedup_vs_cudnn.min():.2f})" if direction == "wgrad" else ""))
    w = now[now.direction == "wgrad"].merge(old, on="problem_id", suffixes=("", "_o"))
    print("\n| layer | wgrad call 156 | us | now | us | cuDNN 156 / 164 |")
    print("|---|---|---|---|---|---|")
    for r in w.itertuples():
        print(f"| {r.problem_id.split('/')[1]} | {r.chosen_o.split(':')[0]} | {r.ours_us_o:.1f} "
              f"| {r.chosen.split(':')[0]} | {r.ours_us:.1f} | {r.cudnn_us_o:.1f} / "
              f"{r.cudnn_us:.1f} |")


if __name__ == "__main__":
    forward_suite()
    backward_suite()
    overlap()
    in_order_where_both_flat()
    per_direction()
    call158()
