"""The tables of README.md from this folder's files and the sweep CSVs (CPU).

    python3 validation/results/flat3d_h100/derived.py > validation/results/flat3d_h100/derived.md
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
SWEEPS = ROOT / "data" / "sweeps" / "h100"
# The runs before this session's: the issue-6 grouped pass (call 173) and forward suite
# (call 191, fp16).
BEFORE = {
    "bwd_full_grouped6": HERE.parent / "planar_flat_h100" / "call173" / "bwd_full_grouped6",
    "issue6_fp16": HERE.parent / "split_reduction_h100" / "call191" / "issue6_fp16",
}
FLAT = {"forward": ("train.csv", "grouped_flat"), "dgrad": ("bwd_dgrad.csv", "dgrad_grouped_flat"),
        "wgrad": ("bwd_wgrad.csv", "wgrad_grouped_flat")}


def gm(x) -> float:
    x = np.asarray(x, dtype=float)
    return float(np.exp(np.log(x).mean())) if len(x) else float("nan")


def sweeps() -> None:
    """Call 205: the flat family's best config against the best of every other family on
    each 3D grouped problem it takes (the sweep rows of the same problems, call 214's
    split dgrad rows included)."""
    print("## Call 205: the 3D flat-grid kernels in the sweeps\n")
    print("CUDA-graph us, fp16; each family's best config; cuDNN from the same sweep rows.\n")
    for direction, (csv, fam) in FLAT.items():
        d = pd.read_csv(SWEEPS / csv, low_memory=False)
        d = d[(d.dims == 3) & d.ok.astype(bool)]
        probs = d[d.family == fam].problem_id.unique()
        print(f"\n### {direction} (`{fam}`)\n")
        print("| problem | cuDNN | best other (family) | flat | other / flat | cuDNN / flat |")
        print("|---|---|---|---|---|---|")
        gains = []
        for pid in probs:
            g = d[d.problem_id == pid]
            by = g.groupby("family").latency_us.min()
            other = by.drop(fam)
            flat, best = by[fam], other.min()
            gains.append(best / flat)
            print(f"| {pid} | {g.cudnn_us.iloc[0]:.1f} | {best:.1f} ({other.idxmin()}) | "
                  f"{flat:.1f} | {best / flat:.2f} | {g.cudnn_us.iloc[0] / flat:.2f} |")
        print(f"\n{len(probs)} problems; the flat kernel is the fastest family on "
              f"{sum(x > 1 for x in gains)}; geomean best other / flat {gm(gains):.2f}.")


def grouped6() -> None:
    """The issue-6 suite's grouped layers, one backward pass, per call; per layer the last
    call against call 173 (before this session)."""
    runs = [("planar_flat_h100 call 173 (before)", BEFORE["bwd_full_grouped6"]),
            ("call 206: 3D flat kernels, retrained models", HERE / "call206" / "bwd_full_grouped6"),
            ("call 207: the same, again", HERE / "call207" / "bwd_full_grouped6"),
            ("call 212: flat wgrad first at a stride only", HERE / "call212" / "bwd_full_grouped6"),
            ("call 213: small fill-the-GPU pairs at once", HERE / "call213" / "bwd_full_grouped6")]
    print("\n## The issue-6 suite's grouped layers, one backward pass\n")
    print("21 layers: ResNeXt-50 at batch 32, ResNeXt3D-50 at batch 1 and 8 (fp16). "
          "Overlapped: as `autograd.gradients` runs it in a CUDA graph.\n")
    print("| run | overlapped | min | in order | min | ours (overlapped) us, sum |")
    print("|---|---|---|---|---|---|")
    frames = {}
    for name, folder in runs:
        d = pd.read_csv(folder / "bench.csv")
        frames[name] = d.set_index("problem_id")
        print(f"| {name} | {gm(d.speedup_vs_cudnn):.3f} | {d.speedup_vs_cudnn.min():.2f} | "
              f"{gm(d.in_order_speedup_vs_cudnn):.3f} | {d.in_order_speedup_vs_cudnn.min():.2f} "
              f"| {d.ours_us.sum():.0f} |")
    first, last = frames[runs[0][0]], frames[runs[-1][0]]
    # cuDNN's time of a layer moves between calls (up to 1.2x): its median over this
    # session's four calls, against our last call's.
    cudnn = pd.concat([frames[n].cudnn_us for n, _ in runs[1:]], axis=1).median(axis=1)
    print(f"\nCall 213's times against cuDNN's median over calls 206-213: "
          f"{gm(cudnn / last.ours_us):.3f} (min {(cudnn / last.ours_us).min():.2f}).\n")
    print("| layer | call 173 us | call 213 us | in order | cuDNN (213) | cuDNN median | x cuDNN "
          "median | dX & dW |")
    print("|---|---|---|---|---|---|---|---|")
    for pid, r in last.iterrows():
        fams = " & ".join(c.split(":")[0] for c in r.chosen.split(" -> ")[-1:][0].split(" & "))
        if " -> " in r.chosen:
            fams = "backward_grouped_flat (fused)"
        print(f"| {pid.removesuffix('/float16')} | {first.ours_us[pid]:.1f} | {r.ours_us:.1f} | "
              f"{r.in_order_us:.1f} | {r.cudnn_us:.1f} | {cudnn[pid]:.1f} | "
              f"{cudnn[pid] / r.ours_us:.2f} | {fams} |")


def categories(title: str, runs: list[tuple[str, Path]], key: str = "speedup_vs_cudnn"
               ) -> None:
    """Geomean and min against cuDNN by category, per run."""
    print(f"\n## {title}\n")
    print("| run | category | layers | geomean | min |")
    print("|---|---|---|---|---|")
    for name, folder in runs:
        d = pd.read_csv(folder / "bench.csv")
        for cat, g in d.groupby("category"):
            print(f"| {name} | {cat} | {len(g)} | {gm(g[key]):.3f} | {g[key].min():.2f} |")


def overlap_probe() -> None:
    """Calls 210 and 212: the issue-6 grouped pass under each launch switch."""
    print("\n## Launch order and overlap (calls 210, 212; `validation/gpu/probe_overlap.py`)\n")
    print("CUDA-graph us of one backward pass, fp16. Call 210 ran with wgrad_grouped_flat "
          "first everywhere (the rule before), call 212 with it first at a stride only.\n")
    cols = []
    for call in ("call210", "call212"):
        d = pd.read_csv(HERE / call / "overlap.csv")
        p = d.pivot(index="problem_id", columns="variant", values="us")
        p.columns = [f"{call[4:]} {c}" for c in p.columns]
        p[f"{call[4:]} in order"] = d.groupby("problem_id").in_order_us.min()
        cols.append(p)
    t = pd.concat(cols, axis=1)
    print("| layer | " + " | ".join(t.columns) + " |")
    print("|---" * (len(t.columns) + 1) + "|")
    for pid, r in t.iterrows():
        print(f"| {pid.removesuffix('/float16')} | " + " | ".join(f"{v:.1f}" for v in r) + " |")


def main() -> None:
    sweeps()
    grouped6()
    categories("The issue-2 suite, one backward pass (overlapped)", [
        ("fused_backward_h100 call 203 (grouped only)",
         HERE.parent / "fused_backward_h100" / "call203" / "bwd_grouped_1"),
        ("call 206", HERE / "call206" / "bwd_full"), ("call 212", HERE / "call212" / "bwd_full"),
        ("call 213", HERE / "call213" / "bwd_full")])
    categories("The issue-6 suite's dense and depthwise layers, one backward pass (call 211)",
               [("call 211, overlapped", HERE / "call211" / "bwd_full_issue6")])
    categories("The issue-6 suite's dense and depthwise layers, in order (call 211)",
               [("call 211, in order", HERE / "call211" / "bwd_full_issue6")],
               key="in_order_speedup_vs_cudnn")
    categories("The issue-6 forward suite", [
        ("split_reduction_h100 call 191, fp16", BEFORE["issue6_fp16"]),
        ("call 207, fp16", HERE / "call207" / "issue6_fp16"),
        ("split_reduction_h100 call 193, bf16",
         HERE.parent / "split_reduction_h100" / "call193" / "issue6_bf16"),
        ("call 208, bf16", HERE / "call208" / "issue6_bf16"),
        ("call 212, bf16", HERE / "call212" / "issue6_bf16")])
    overlap_probe()


if __name__ == "__main__":
    main()
