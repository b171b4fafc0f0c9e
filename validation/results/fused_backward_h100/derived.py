"""The tables of README.md from this folder's files (CPU).

    python3 validation/results/fused_backward_h100/derived.py > .../derived.md
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
BEFORE = HERE.parent / "split_reduction_h100" / "call196" / "bwd_full" / "bench.csv"


def grouped(path) -> pd.DataFrame:
    d = pd.read_csv(path)
    return d[d.category == "grouped"]


def gm(x) -> float:
    return float(np.exp(np.log(np.asarray(x, dtype=float)).mean()))


def short(cfg: str) -> str:
    return cfg.replace(";num_stages=2", "").replace("BLOCK_", "")


def probe(call: str, name: str, title: str) -> None:
    """A probe CSV: per layer, the two directions' kernels (overlapped, in order), the
    dispatcher's fused config and the best fused config, and the largest error."""
    d = pd.read_csv(HERE / call / name)
    print(f"\n## {title}\n")
    print("CUDA-graph us of one backward pass; cuDNN from the same run. Errors: largest "
          "relative error by norm against torch's float32 gradients, over every config.\n")
    print("| layer | cuDNN | two kernels, overlapped | in order | fused, the rule's config "
          "| fused, best | best config | configs | max error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for pid, g in d.groupby("problem_id", sort=False):
        pair = g[g.config == "pair"]
        order = g[g.config == "pair_in_order"]
        fu = g[g.variant == "fused"].sort_values("us")
        unb = g[g.variant == "fused_unbalanced"]
        rule = "-"
        if len(unb):
            key = unb.config.iloc[0].removeprefix("unbalanced:")
            rule = f"{g[g.config == key].us.iloc[0]:.1f} (uneven rows {unb.us.iloc[0]:.1f})"
        err = max(g.dx_err.max(), g.dw_err.max())
        print(f"| {pid.split('/')[1]} | {pair.cudnn_us.iloc[0]:.1f} | {pair.us.iloc[0]:.1f} | "
              f"{order.us.iloc[0]:.1f} | {rule} | {fu.us.iloc[0]:.1f} | "
              f"{short(fu.config.iloc[0])} | {len(fu)} | {err:.1e} |")


def benches() -> None:
    """Every issue-2 grouped one-pass benchmark of the folder, geomeans."""
    print("\n## Issue-2 grouped one backward pass (7 layers, batch 32)\n")
    print("| call, run | device | dtype | overlapped | min | in order | min | fused layers |")
    print("|---|---|---|---|---|---|---|---|")
    rows = [("split_reduction_h100 call196", "H100", BEFORE)]
    for call in sorted(p.name for p in HERE.iterdir() if p.name.startswith("call")):
        for b in sorted((HERE / call).glob("bwd_grouped_*/bench.csv")):
            dev = (HERE / call / "env.txt").read_text().splitlines()[1].split(",")[0]
            rows.append((f"{call} {b.parent.name.removeprefix('bwd_grouped_')}",
                         "H200" if "H200" in dev else "H100", b))
    for name, dev, path in rows:
        d = grouped(path)
        dtype = d.problem_id.iloc[0].split("/")[-1]
        fused = int(d.chosen.str.contains("->").sum())
        print(f"| {name} | {dev} | {dtype} | {gm(d.speedup_vs_cudnn):.3f} | "
              f"{d.speedup_vs_cudnn.min():.2f} | {gm(d.in_order_speedup_vs_cudnn):.3f} | "
              f"{d.in_order_speedup_vs_cudnn.min():.2f} | {fused} |")


def layers() -> None:
    """Per layer: call 196 (before) against call 203's two fp16 runs."""
    before = grouped(BEFORE).set_index("layer")
    runs = [pd.read_csv(HERE / "call203" / f"bwd_grouped_{r}" / "bench.csv").set_index("layer")
            for r in (1, 2)]
    print("\n## Grouped layers, overlapped (us ours / cuDNN, x cuDNN)\n")
    print("| layer | call 196 (two kernels) | call 203 run 1 | call 203 run 2 | runs now |")
    print("|---|---|---|---|---|")
    for layer in before.index:
        cells = [f"{t.ours_us[layer]:.1f} / {t.cudnn_us[layer]:.1f}, "
                 f"x{t.speedup_vs_cudnn[layer]:.2f}" for t in (before, *runs)]
        now = runs[0].chosen[layer]
        kind = now.split("-> ")[1].split(";SPLIT")[0] if "->" in now else "two kernels"
        print(f"| {layer} | {' | '.join(cells)} | {kind} |")
    ours = gm(runs[0].ours_us / before.ours_us.reindex(runs[0].index))
    print(f"\nOur time, call 203 run 1 / call 196: {ours:.3f} (geomean of 7 layers).")


if __name__ == "__main__":
    print("# Derived tables (fused_backward_h100)")
    probe("call199", "fused_fp16.csv", "First kernel, stride 1 only (call 199, H100, fp16)")
    probe("call201", "fused_fp16.csv",
          "Stride 1, 16-wide tiles, even rows (call 201, H100, fp16)")
    probe("call203", "fused_fp16_resumed.csv",
          "Any stride (call 202, finished by call 203, H100, fp16)")
    benches()
    layers()
