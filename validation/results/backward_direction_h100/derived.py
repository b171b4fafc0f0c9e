"""The tables of README.md from this folder's files, the backward sweep and its model (CPU).

    python3 validation/results/backward_direction_h100/derived.py \
        > validation/results/backward_direction_h100/derived.md

It reads the backward sweep and model of the tree it runs in: derived.md is of commit
fe27aa1's. The thirty-sixth session added rows (3D, and backward_pair, whose empty config
this script does not expect) and retrained the model, so run it in a checkout of fe27aa1.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from convdispatch.validation.report import geomean as gm

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
SWEEP = ROOT / "data" / "sweeps" / "h100" / "bwd_backward.csv"
MODEL = ROOT / "models" / "h100" / "backward"
# Backward-pass benchmarks: call 215 (dgrad model 285a2e254131, fused config by rule) and
# call 217 (the same, fused config by the backward model).
PASSES = [(call, run) for call in ("call215", "call217")
          for run in ("bwd_full_grouped6", "bwd_full", "bwd_full_issue6")] + [
    ("call218", run) for run in ("bwd_grouped6", "bwd_full_grouped6_2", "bwd_full_grouped6_3")]
SUITE = {"bwd_full_grouped6": "issue-6 grouped layers", "bwd_full": "issue-2 suite",
         "bwd_full_issue6": "issue-6 suite", "bwd_grouped6": "issue-6 grouped layers",
         "bwd_full_grouped6_2": "issue-6 grouped layers", "bwd_full_grouped6_3":
         "issue-6 grouped layers"}


def bench(call: str, run: str) -> pd.DataFrame:
    """A run's rows of one backward pass (a run may also time each direction alone)."""
    b = pd.read_csv(HERE / call / run / "bench.csv")
    return b[b.direction == "full"]


def passes() -> None:
    print("## One backward pass (dX and dW) against cuDNN's `convolution_backward`\n")
    print("Overlapped as `autograd.gradients` runs them; geomean (min) of cuDNN / ours.\n")
    print("| call | run | dense | grouped | depthwise |")
    print("|---|---|---|---|---|")
    for call, run in PASSES:
        b = bench(call, run)
        cells = []
        for cat in ("dense", "grouped", "depthwise"):
            s = b[b.category == cat]
            sp = s.cudnn_us / s.ours_us
            cells.append(f"{gm(sp):.3f} ({sp.min():.2f}), {len(s)} layers" if len(s) else "-")
        print(f"| {call} | {SUITE[run]} | " + " | ".join(cells) + " |")
    print()


def grouped_layers() -> None:
    print("## The issue-6 grouped layers in each run (us)\n")
    print("Same kernels in every run (`chosen` identical); cuDNN's time moves between runs.\n")
    frames = []
    for call, run in PASSES:
        if run == "bwd_full":
            continue
        b = bench(call, run)
        b = b[b.category == "grouped"].set_index("problem_id")
        frames.append((f"{call} {run.replace('bwd_full_', '').replace('bwd_', '')}", b))
    ids = frames[0][1].index
    same = all((f.loc[ids, "chosen"] == frames[0][1].loc[ids, "chosen"]).all() for _, f in frames)
    print(f"Choices identical in all {len(frames)} runs: {same}.\n")
    print("| layer | " + " | ".join(f"{n} ours / cuDNN" for n, _ in frames) + " |")
    print("|---|" + "---|" * len(frames))
    for pid in ids:
        cells = [f"{f.loc[pid, 'ours_us']:.1f} / {f.loc[pid, 'cudnn_us']:.1f}" for _, f in frames]
        print(f"| {pid.replace('/float16', '')} | " + " | ".join(cells) + " |")
    sp = [gm(f.cudnn_us / f.ours_us) for _, f in frames]
    print("| geomean cuDNN / ours | " + " | ".join(f"{v:.3f}" for v in sp) + " |")
    first = frames[0][1]

    def moved(col: str) -> float:
        return max(abs(gm(f[col] / first.loc[f.index, col]) - 1) for _, f in frames)

    print(f"\nMedian of the {len(sp)} geomeans: {float(np.median(sp)):.3f}. Against the first "
          f"run, the geomean of our times moved by at most {moved('ours_us'):.1%}, of cuDNN's "
          f"by {moved('cudnn_us'):.1%}.\n")


def directions() -> None:
    print("## Each direction alone (call 218, the issue-6 grouped layers)\n")
    b = pd.read_csv(HERE / "call218" / "bwd_grouped6" / "bench.csv")
    print("| direction | geomean cuDNN / ours | min | layers below 1.0 |")
    print("|---|---|---|---|")
    for d in ("dgrad", "wgrad", "full"):
        s = b[b.direction == d].speedup_vs_cudnn
        print(f"| {d} | {gm(s):.3f} | {s.min():.2f} | {int((s < 1).sum())} |")
    print()


def backward_sweep() -> None:
    os.environ.setdefault("CONVDISPATCH_STRICT", "0")
    from convdispatch.dispatcher.api import decide
    from convdispatch.kernels import backward_grouped_flat as fused
    from convdispatch.kernels.device import lookup
    from convdispatch.kernels.geometry import ConvGeometry

    dev = lookup("h100")
    df = pd.read_csv(SWEEP)
    meta = json.loads((MODEL / "meta.json").read_text())
    cv = meta["metrics"]["cv"]
    print("## The backward sweep (call 216) and model\n")
    print(f"{len(df)} rows ({int(df.ok.sum())} ok) on {df.problem_id.nunique()} problems. Model "
          f"{meta['identity'][:12]} ({meta['shipped']}): out-of-fold efficiency "
          f"{cv['efficiency_geomean']:.4f} (P10 {cv['efficiency_p10']:.3f}, min "
          f"{cv['efficiency_min']:.3f}), top-1 {cv['top1']:.2f}; the picks are "
          f"{cv['vs_cudnn_geomean']:.2f}x cuDNN's pass.\n")
    print("Per problem: the best config, the rule's (`rule_config`) and the model's pick "
          "(in-sample), latencies in us; `fuses`: whether a pass of it runs the fused kernel "
          "(`pair_config`).\n")
    print("| problem | fuses | best | rule | model | cuDNN pass | best config |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for pid, g in df[df.ok == 1].groupby("problem_id"):
            geom = ConvGeometry.from_row(g.iloc[0])
            lat = dict(zip(g.config, g.latency_us))
            rule = lat[str(fused.rule_config(geom, dev))]
            model = lat[str(decide(geom, dev, direction="backward").candidate.config)]
            best = g.loc[g.latency_us.idxmin()]
            fuses = fused.pair_config(geom, dev) is not None
            rows.append((best.latency_us, rule, model, fuses))
            print(f"| {pid.replace('/float16', '')} | {'yes' if fuses else 'no'} | "
                  f"{best.latency_us:.1f} | {rule:.1f} | {model:.1f} | {g.cudnn_us.iloc[0]:.1f} | "
                  f"{best.config.replace(';num_stages=2;num_warps=2', '')} |")
    r = pd.DataFrame(rows, columns=["best", "rule", "model", "fuses"])
    for name, s in (("all problems", r), ("where passes fuse", r[r.fuses])):
        print(f"\n{name} ({len(s)}): efficiency (best / picked) rule {gm(s.best / s.rule):.4f}, "
              f"model in-sample {gm(s.best / s.model):.4f}; rule differs from the best on "
              f"{int((s.rule > s.best).sum())}.")


def fused_against_directions() -> None:
    print("\n## The fused kernel against the two directions' best (sweeps, us)\n")
    print("Best fused config (bwd_backward.csv) against the best dgrad and wgrad kernels of "
          "the same problem (bwd_dgrad.csv, bwd_wgrad.csv): their sum is the pair in order, "
          "their larger one a floor for the pair at once.\n")
    sweeps = SWEEP.parent
    best = {d: pd.read_csv(sweeps / f"bwd_{d}.csv", low_memory=False).query("ok == 1")
            .groupby("problem_id").latency_us.min() for d in ("dgrad", "wgrad")}
    fused = pd.read_csv(SWEEP).query("ok == 1").groupby("problem_id").latency_us.min()
    both = fused.index.intersection(best["dgrad"].index).intersection(best["wgrad"].index)
    print("| problem | fused | dgrad | wgrad | sum / fused | larger / fused |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for pid in both:
        f, d, w = fused[pid], best["dgrad"][pid], best["wgrad"][pid]
        ratios.append((d + w) / f)
        print(f"| {pid.replace('/float16', '')} | {f:.1f} | {d:.1f} | {w:.1f} | "
              f"{(d + w) / f:.2f} | {max(d, w) / f:.2f} |")
    print(f"\n{len(both)} problems; sum / fused {min(ratios):.2f}-{max(ratios):.2f}.")


def strided_wgrad_picks() -> None:
    print("\n## Call 218's slowest wgrad layers: the pick against the sweep's best (us)\n")
    b = pd.read_csv(HERE / "call218" / "bwd_grouped6" / "bench.csv")
    w = pd.read_csv(SWEEP.parent / "bwd_wgrad.csv", low_memory=False).query("ok == 1")
    w = w.assign(id=w.family + ":" + w.config)
    print("| layer | ours (bench) | cuDNN (bench) | pick (sweep) | best (sweep) | best family |")
    print("|---|---|---|---|---|---|")
    for _, r in b[(b.direction == "wgrad") & (b.speedup_vs_cudnn < 1.05)].iterrows():
        g = w[w.problem_id == r.problem_id]
        top = g.loc[g.latency_us.idxmin()]
        pick = g[g.id == r.chosen].latency_us
        print(f"| {r.problem_id.replace('/float16', '')} | {r.ours_us:.1f} | {r.cudnn_us:.1f} | "
              f"{pick.iloc[0]:.1f} | {top.latency_us:.1f} | {top.family} |")


def resnext50_forward() -> None:
    print("\n## 2D ResNeXt-50 grouped forward (issue 6; flat3d_h100 calls 207 and 212)\n")
    for call, run in (("call207", "issue6_fp16"), ("call212", "issue6_bf16")):
        b = pd.read_csv(HERE.parent / "flat3d_h100" / call / run / "bench.csv")
        s = b[(b.category == "grouped") & b.problem_id.str.startswith("resnext50")]
        sp = s.speedup_vs_cudnn
        print(f"- {call} {run}: {len(s)} layers, geomean {gm(sp):.3f}x cuDNN "
              f"({sp.min():.2f}-{sp.max():.2f})")


if __name__ == "__main__":
    print("# Derived tables (made by derived.py)\n")
    passes()
    grouped_layers()
    directions()
    backward_sweep()
    fused_against_directions()
    strided_wgrad_picks()
    resnext50_forward()
