"""The README's numbers that combine committed files (CPU; no GPU needed).

    cd validation/results/planar_flat_h100 && python derived.py > derived.md

Sweep rows: the current ones in data/sweeps/h100/ and the rows they replaced or that were
left out, kept here:
- ``*_rows32_unplanar.csv.gz``: 32-channel flat-grid rows of whole rows, calls 157-167;
- ``wgrad_rows_4buf.csv.gz``: wgrad_grouped_flat with four buffers (num_stages=4), the
  16-channel rows from call 167 (whole rows), the 32-channel ones from call 168 (planes);
- ``call168_wgrad_rows16_planar.csv.gz``: 16-channel wgrad rows in planes (call 168).
Each sweep CSV's meta.json names the GPU and the versions.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
SWEEPS = HERE.parents[2] / "data/sweeps/h100"
BEFORE = HERE.parent / "grouped_flat_h100"  # calls 162-164, the models before
CATS = ("dense", "grouped", "depthwise")


def gmean(x) -> float:
    return float(np.exp(np.log(np.asarray(x, dtype=float)).mean()))


def rows(path: Path) -> pd.DataFrame:
    d = pd.read_csv(path, low_memory=False)
    return d[d.status == "ok"]


def family_rows(sweep: str, family: str, block_n: int | None = None) -> pd.DataFrame:
    d = rows(SWEEPS / f"{sweep}.csv")
    d = d[d.family == family]
    return d if block_n is None else d[d.config.str.contains(f"BLOCK_N={block_n};")]


def compare(title: str, new: pd.DataFrame, old: pd.DataFrame) -> None:
    """Old latency / new latency: per config, and of each problem's best config."""
    m = new.merge(old[["problem_id", "config", "latency_us"]], on=["problem_id", "config"],
                  suffixes=("", "_old"))
    best = m.groupby("problem_id")[["latency_us", "latency_us_old"]].min()
    r = best.latency_us_old / best.latency_us
    print(f"| {title} | {len(m)} | {gmean(m.latency_us_old / m.latency_us):.3f} | "
          f"{best.index.size} | {gmean(r):.3f} | {r.min():.2f}-{r.max():.2f} |")


def ncu_summary() -> None:
    print("## Nsight Compute, call 166 (ResNeXt-50 batch 32, the wgrad model's configs)\n")
    print("| profile | kernel | duration us | warps a scheduler | shared-load wavefronts "
          "that are conflicts | top stall |")
    print("|---|---|---|---|---|---|")
    for f in sorted((HERE / "call166").glob("ncu_*.txt.gz")):
        text = gzip.open(f, "rt").read()
        for block in re.split(r"\n  (?=\S+_kernel|\S*xmma)", text)[1:]:
            name = block.split()[0].split("(")[0][:40]
            dur = re.search(r"Duration\s+us\s+([\d.]+)", block)
            warps = re.search(r"Active Warps Per Scheduler\s+warp\s+([\d.]+)", block)
            conf = re.search(r"which represent\s+([\d.]+)%", block)
            stall = re.search(r"spends ([\d.]+) cycles being stalled (.*?)\.", block, re.S)
            stall_text = (" ".join(stall.group(2).split())[:60] + f" ({stall.group(1)} cycles)"
                          if stall else "-")
            print(f"| {f.name[4:-7]} | {name} | {dur.group(1) if dur else '-'} | "
                  f"{warps.group(1) if warps else '-'} | "
                  f"{conf.group(1) + '%' if conf else '-'} | {stall_text} |")


def sweeps() -> None:
    print("\n## Sweep rows before and after (old latency / new latency)\n")
    print("| change | configs | per config, geomean | problems | best config, geomean | "
          "range |")
    print("|---|---|---|---|---|---|")
    wg = family_rows("bwd_wgrad", "wgrad_grouped_flat")
    four = rows(HERE / "wgrad_rows_4buf.csv.gz")
    four = four.assign(config=four.config.str.replace("num_stages=4", "num_stages=2"))
    compare("wgrad, 4 buffers against 2 (calls 167-168; new = 4)", four, wg)
    compare("wgrad, 16 channels: planes (call 168; new) against whole rows",
            rows(HERE / "call168_wgrad_rows16_planar.csv.gz"), wg[wg.config.str.contains(
                "BLOCK_N=16;")])
    compare("wgrad, 32 channels: planes (call 168) against whole rows",
            wg[wg.config.str.contains("BLOCK_N=32;")],
            rows(HERE / "wgrad_rows32_unplanar.csv.gz"))
    compare("dgrad twin, 32 channels: planes (call 169) against whole rows",
            family_rows("bwd_dgrad", "dgrad_grouped_flat", 32),
            rows(HERE / "dgrad_rows32_unplanar.csv.gz"))
    for sweep in ("train", "holdout"):
        compare(f"forward {sweep}, 32 channels: planes (call 169) against whole rows",
                family_rows(sweep, "grouped_flat", 32),
                rows(HERE / f"{sweep}_rows32_unplanar.csv.gz"))


def bench_csv(folder: Path) -> Path:
    """A run's bench.csv, or its gzipped copy (older issue-6 runs are kept gzipped)."""
    plain = folder / "bench.csv"
    return plain if plain.exists() else folder / "bench.csv.gz"


def forward_suite() -> None:
    print("\n## Issue-6 forward suite (calls 162-163 -> 170-171)\n")
    print("| dtype | category | layers | before | now | min now |")
    print("|---|---|---|---|---|---|")
    for dtype, old, new in (("fp16", "call162/issue6_fp16", "call170/issue6_fp16"),
                            ("bf16", "call163/issue6_bf16", "call171/issue6_bf16")):
        o, n = pd.read_csv(bench_csv(BEFORE / old)), pd.read_csv(bench_csv(HERE / new))
        for cat in CATS:
            oc, nc = o[o.category == cat], n[n.category == cat]
            print(f"| {dtype} | {cat} | {len(nc)} | {gmean(oc.speedup_vs_cudnn):.3f} | "
                  f"{gmean(nc.speedup_vs_cudnn):.3f} | {nc.speedup_vs_cudnn.min():.2f} |")
        top = n.loc[n.tflops.idxmax()]
        print(f"| {dtype} | top rate | | | {top.tflops:.0f} TFLOP/s | {top.problem_id} |")


def backward_suite() -> None:
    print("\n## Issue-2 backward suite, one whole pass (call 162 -> 170)\n")
    o = pd.read_csv(BEFORE / "call162/bwd_full/bench.csv")
    n = pd.read_csv(HERE / "call170/bwd_full/bench.csv")
    print("| category | layers | overlapped | in order | time now / before: ours overlapped, "
          "in order, cuDNN |")
    print("|---|---|---|---|---|")
    m = n.merge(o, on="problem_id", suffixes=("", "_o"))
    for cat in CATS:
        x = m[m.category == cat]
        print(f"| {cat} | {len(x)} | {gmean(x.speedup_vs_cudnn_o):.3f} -> "
              f"{gmean(x.speedup_vs_cudnn):.3f} | {gmean(x.in_order_speedup_vs_cudnn_o):.3f} -> "
              f"{gmean(x.in_order_speedup_vs_cudnn):.3f} | {gmean(x.ours_us / x.ours_us_o):.3f}, "
              f"{gmean(x.in_order_us / x.in_order_us_o):.3f}, "
              f"{gmean(x.cudnn_us / x.cudnn_us_o):.3f} |")
    print("\nGrouped layers, us (ours overlapped / in order; cuDNN one pass):\n")
    print("| layer | dgrad & wgrad now | 162 | 170 | cuDNN 162 / 170 | x 170 ov / io |")
    print("|---|---|---|---|---|---|")
    for r in m[m.category == "grouped"].itertuples():
        fams = " & ".join(p.split(":")[0] for p in r.chosen.split(" & "))
        print(f"| {r.problem_id.split('/')[1]} | {fams} | {r.ours_us_o:.1f} / "
              f"{r.in_order_us_o:.1f} | {r.ours_us:.1f} / {r.in_order_us:.1f} | "
              f"{r.cudnn_us_o:.1f} / {r.cudnn_us:.1f} | {r.speedup_vs_cudnn:.2f} / "
              f"{r.in_order_speedup_vs_cudnn:.2f} |")
    g6 = pd.read_csv(HERE / "call170/bwd_full_grouped6/bench.csv")
    g6o = pd.read_csv(BEFORE / "call162/bwd_full_grouped6/bench.csv")
    print(f"\nIssue-6 suite's grouped layers one pass: overlapped "
          f"{gmean(g6o.speedup_vs_cudnn):.3f} -> {gmean(g6.speedup_vs_cudnn):.3f}, in order "
          f"{gmean(g6o.in_order_speedup_vs_cudnn):.3f} -> "
          f"{gmean(g6.in_order_speedup_vs_cudnn):.3f}.")


def per_direction() -> None:
    print("\n## Issue-2 grouped layers, each gradient alone (call 164 -> 171)\n")
    o = pd.read_csv(BEFORE / "call164/bwd_grouped/bench.csv")
    n = pd.read_csv(HERE / "call171/bwd_grouped/bench.csv")
    print("| direction | before | now | min now |")
    print("|---|---|---|---|")
    for d in ("dgrad", "wgrad"):
        oc, nc = o[o.direction == d], n[n.direction == d]
        print(f"| {d} | {gmean(oc.speedup_vs_cudnn):.3f} | {gmean(nc.speedup_vs_cudnn):.3f} | "
              f"{nc.speedup_vs_cudnn.min():.2f} |")
    print("\n| layer | direction | chosen now | us 164 -> 171 | cuDNN us 164 -> 171 |")
    print("|---|---|---|---|---|")
    m = n.merge(o, on=["problem_id", "direction"], suffixes=("", "_o"))
    for r in m.itertuples():
        print(f"| {r.problem_id.split('/')[1]} | {r.direction} | {r.chosen.split(':')[0]} | "
              f"{r.ours_us_o:.1f} -> {r.ours_us:.1f} | {r.cudnn_us_o:.1f} -> "
              f"{r.cudnn_us:.1f} |")


def pair_rule() -> None:
    print("\n## dX and dW in order where both kernels fill the GPU (call 170 -> 173)\n")
    print("| suite | grouped layers | overlapped 170 -> 173 | in order 170 -> 173 | "
          "cuDNN time 173 / 170 |")
    print("|---|---|---|---|---|")
    for name, path in (("issue2", "bwd_full"), ("issue6", "bwd_full_grouped6")):
        o = pd.read_csv(HERE / f"call170/{path}/bench.csv")
        n = pd.read_csv(HERE / f"call173/{path}/bench.csv")
        m = n.merge(o, on="problem_id", suffixes=("", "_o"))
        m = m[m.category == "grouped"]
        print(f"| {name} | {len(m)} | {gmean(m.speedup_vs_cudnn_o):.3f} -> "
              f"{gmean(m.speedup_vs_cudnn):.3f} | {gmean(m.in_order_speedup_vs_cudnn_o):.3f} "
              f"-> {gmean(m.in_order_speedup_vs_cudnn):.3f} | "
              f"{gmean(m.cudnn_us / m.cudnn_us_o):.3f} |")
    print("\nOverlapped over in-order time by the number of flat-grid kernels in the pair "
          "(call 173):\n")
    print("| suite | flat-grid kernels | layers | overlapped / in order, each layer |")
    print("|---|---|---|---|")
    for name, path in (("issue2", "bwd_full"), ("issue6", "bwd_full_grouped6")):
        n = pd.read_csv(HERE / f"call173/{path}/bench.csv")
        n = n[n.category == "grouped"]
        flat = n.chosen.str.count("grouped_flat")
        for k in (0, 1, 2):
            x = n[flat == k]
            if len(x):
                print(f"| {name} | {k} | {len(x)} | "
                      + ", ".join(f"{v:.2f}" for v in x.ours_us / x.in_order_us) + " |")


def changed_choices() -> None:
    print("\n## Where the retrained models changed choices (our time now / before)\n")
    print("| run | category | layers | changed | changed: ours | unchanged: ours | cuDNN |")
    print("|---|---|---|---|---|---|---|")
    runs = (("issue-6 fp16", "call162/issue6_fp16", "call170/issue6_fp16", "call_us"),
            ("issue-6 bf16", "call163/issue6_bf16", "call171/issue6_bf16", "call_us"),
            ("issue-2 one pass, overlapped", "call162/bwd_full", "call170/bwd_full", "ours_us"),
            ("issue-2 one pass, in order", "call162/bwd_full", "call170/bwd_full",
             "in_order_us"))
    for name, old, new, col in runs:
        m = pd.read_csv(bench_csv(HERE / new)).merge(
            pd.read_csv(bench_csv(BEFORE / old)), on="problem_id", suffixes=("", "_o"))
        for cat in CATS:
            x = m[m.category == cat]
            ch = x.chosen != x.chosen_o
            r = x[col] / x[f"{col}_o"]
            cells = [f"{gmean(r[sel]):.3f}" if sel.any() else "-" for sel in (ch, ~ch)]
            print(f"| {name} | {cat} | {len(x)} | {int(ch.sum())} | {cells[0]} | {cells[1]} | "
                  f"{gmean(x.cudnn_us / x.cudnn_us_o):.3f} |")


if __name__ == "__main__":
    ncu_summary()
    sweeps()
    forward_suite()
    backward_suite()
    per_direction()
    changed_choices()
    pair_rule()
