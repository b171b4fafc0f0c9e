"""Tables of this folder's README from its call folders (CPU): derived.md.

    python3 validation/results/wide_tiles_h200/derived.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
RUNS = [("call310", "float16"), ("call311", "float16"), ("call311", "bfloat16")]


def geomean(x) -> float:
    return float(np.exp(np.log(np.asarray(x, dtype=float)).mean()))


def short(pid: str) -> str:
    return (pid.replace("resnext50_32x4d/", "ResNeXt-50 ").replace("video3d/resnext3d_50.",
                                                                    "ResNeXt3D-50 ")
            .rsplit("/", 1)[0])


def probe(call: str, dtype: str) -> pd.DataFrame:
    tag = "fp16" if dtype == "float16" else "bf16"
    return pd.read_csv(HERE / call / f"wide_{tag}.csv")


def best_by_layer(d: pd.DataFrame) -> pd.DataFrame:
    """Each layer's shipped time, fastest narrower config (shipped or call 302's fastest
    WGMMA ones) and fastest 64-wide one."""
    out = {}
    for pid, g in d.groupby("problem_id", sort=False):
        ok = g[g.us.notna()]
        wide = ok[ok.how == "wide"]
        out[pid] = dict(shipped=ok[ok.how == "shipped"].us.min(),
                        narrow=ok[ok.how != "wide"].us.min(),
                        wide=wide.us.min() if len(wide) else np.nan,
                        wide_configs=len(wide))
    return pd.DataFrame.from_dict(out, orient="index")


def whole_suite_lines(grouped_310: pd.DataFrame) -> list[str]:
    """Call 312: the whole issue-6 suite under the shipped H100 model, by category."""
    lines = ["", "## The whole issue-6 suite (call 312, the shipped H100 model on an H200)", "",
             "| dtype | dense | grouped | depthwise | lowest layer | highest rate |",
             "|---|---|---|---|---|---|"]
    for tag in ("fp16", "bf16"):
        d = pd.read_csv(HERE / "call312" / f"issue6_{tag}" / "bench.csv")
        cats = {c: geomean(g.speedup_vs_cudnn) for c, g in d.groupby("category")}
        low = d.loc[d.speedup_vs_cudnn.idxmin()]
        top = d.loc[d.tflops.idxmax()]
        lines.append(f"| {tag} | {cats['dense']:.3f} | {cats['grouped']:.3f} | "
                     f"{cats['depthwise']:.3f} | {low.speedup_vs_cudnn:.2f} "
                     f"({short(low.problem_id)}) | {top.tflops:.0f} TFLOP/s "
                     f"({short(top.problem_id)}) |")
    g = pd.read_csv(HERE / "call312" / "issue6_fp16" / "bench.csv").set_index("problem_id")
    g = g.reindex(grouped_310.index)
    lines += ["", f"Grouped float16 against call 310's suite run: the same choice on every "
              f"layer: {'yes' if (g.chosen == grouped_310.chosen).all() else 'no'}; call "
              f"310's time / call 312's: ours {geomean(grouped_310.call_us / g.call_us):.3f}, "
              f"cuDNN {geomean(grouped_310.cudnn_us / g.cudnn_us):.3f}. The measured bf16 "
              "peaks are each run's own (bench.md)."]
    return lines


def tma_twin_lines() -> list[str]:
    """Call 302's whole space (H200, float16): each TMA config against its cp.async twin,
    the case for (or against) a rule that takes TMA wherever it fits."""
    space = HERE.parent / "filter_async_h200" / "call302"
    d = pd.concat([pd.read_csv(space / f"space_{i}.csv") for i in (0, 1)])
    d = d[d.on_us.notna()]
    tma = d[d.config.str.contains("TMA=1;")].assign(
        twin=lambda t: t.config.str.replace("TMA=1;", "", regex=False))
    m = tma.merge(d[["problem_id", "config", "on_us"]].rename(
        columns={"config": "twin", "on_us": "cp_us"}), on=["problem_id", "twin"])
    x = m.cp_us / m.on_us
    return ["", "## TMA against cp.async, config by config (call 302's whole space, float16)",
            "", f"{len(m)} pairs on {m.problem_id.nunique()} layers: the cp.async twin's time "
            f"over the TMA config's {geomean(x):.3f} (geomean), {x.min():.2f}-{x.max():.2f}; "
            f"TMA faster on {(x > 1).mean():.0%}, slower by over 3% on {(x < 0.97).mean():.0%}."]


# Small-M 1x1 layers with deep reductions among the dense category's lowest in call 312
SMALL_M = ("video3d/resnext3d_50.layer4.1.conv1/n8", "video3d/resnext3d_50.layer3.1.conv1/n1",
           "video3d/resnext3d_50.layer4.0.conv3/n1", "resnet50/layer3.1.conv1/n1")


def small_m_lines() -> list[str]:
    """Those layers in call 312 (H200, float16) and each family's fastest row of the H100
    forward sweep on them (data/sweeps/h100, float16; cuDNN as the sweep timed it)."""
    suite = pd.read_csv(HERE / "call312" / "issue6_fp16" / "bench.csv").set_index("problem_id")
    sweeps = HERE.parents[2] / "data" / "sweeps" / "h100"
    rows = pd.concat([pd.read_csv(sweeps / f"{plan}.csv", usecols=[
        "problem_id", "family", "ok", "latency_us", "cudnn_us"]) for plan in ("train", "holdout")])
    rows = rows[rows.ok == 1]
    lines = ["", "## Small-M 1x1 layers (dense)", "",
             "| layer | call 312 x cuDNN (H200) | H100 sweep: fastest family, us | cuDNN us | "
             "splitk us |", "|---|---|---|---|---|"]
    for pid in SMALL_M:
        r = rows[rows.problem_id == f"{pid}/float16"]
        best = r.loc[r.latency_us.idxmin()]
        split = r[r.family == "splitk"].latency_us.min()
        lines.append(f"| {pid} | {suite.loc[f'{pid}/float16', 'speedup_vs_cudnn']:.2f} | "
                     f"{best.family} {best.latency_us:.2f} | {best.cudnn_us:.2f} | "
                     f"{split:.2f} |")
    return lines


def main() -> None:
    lines = ["# Derived tables (made by derived.py)", ""]
    tables = {run: best_by_layer(probe(*run)) for run in RUNS}
    lines += ["## The fastest 64-wide config against the fastest narrower one, by layer", "",
              "us: the probe's (CUDA-graph replays, L2 flushed, median; each config the lowest "
              "of three interleaved rounds). Narrower: the shipped choice and call 302's three "
              "fastest offered WGMMA configs of 16- and 32-wide tiles. Call 310 offered "
              "64-wide tiles to 32-channel groups too (ResNeXt-50 layer4.x, ResNeXt3D-50 "
              "layer4.x); call 311 ran under the final rule, which does not.", "",
              "| layer | " + " | ".join(f"{c} {d}: shipped / narrower / 64-wide"
                                        for c, d in RUNS) + " |",
              "|---|" + "---|" * len(RUNS)]
    for pid in tables[RUNS[0]].index:
        cells = []
        for run in RUNS:
            t = tables[run]
            key = pid if run[1] == "float16" else pid.replace("/float16", "/bfloat16")
            r = t.loc[key]
            wide = f"{r.wide:.2f} ({r.wide / r.narrow:.3f}x)" if r.wide == r.wide else "-"
            cells.append(f"{r.shipped:.2f} / {r.narrow:.2f} / {wide}")
        lines.append(f"| {short(pid)} | " + " | ".join(cells) + " |")
    lines += ["", "x: the 64-wide time over the narrower one (below 1: the 64-wide tile is "
              "faster).", ""]
    lines += ["## Counts", "", "| run | layers with a 64-wide config | 64-wide faster | "
              "64-wide faster by 2% or more | geomean 64-wide / narrower |",
              "|---|---|---|---|---|"]
    for run in RUNS:
        t = tables[run].dropna(subset=["wide"])
        ratio = t.wide / t.narrow
        lines.append(f"| {run[0]} {run[1]} | {len(t)} | {int((ratio < 1).sum())} | "
                     f"{int((ratio < 0.98).sum())} | {geomean(ratio):.3f} |")
    # Against the suite's cuDNN (call 310: bench_layers, cudnn.benchmark on)
    suite = pd.read_csv(HERE / "call310" / "suite_grouped_fp16" / "bench.csv").set_index(
        "problem_id")
    t = tables[("call310", "float16")]
    cud = suite.cudnn_us.reindex(t.index)
    lines += ["", "## Against cuDNN (call 310, float16; cuDNN from the suite run of the same "
              "call)", "", "| | geomean x cuDNN over the 21 grouped layers |", "|---|---|",
              f"| the suite as shipped (bench_layers) | {geomean(suite.speedup_vs_cudnn):.3f} |",
              f"| the shipped choice, the probe's time | {geomean(cud / t.shipped):.3f} |",
              f"| the fastest narrower config a layer | {geomean(cud / t.narrow):.3f} |",
              "| the fastest config a layer, 64-wide included | "
              f"{geomean(cud / np.fmin(t.narrow, t.wide)):.3f} |"]
    # The halves' filter tiles held as blocks alone: the suite against call 309's
    old = pd.read_csv(HERE.parent / "flat_buffers_h200" / "call309" / "suite_grouped_fp16" /
                      "bench.csv").set_index("problem_id")
    same = (old.chosen == suite.chosen.reindex(old.index)).all()
    lines += ["", "## The suite before and after (float16: call 309, halves' filter tiles "
              "whole; call 310, the blocks alone)", "",
              f"Same choice on every layer: {'yes' if same else 'no'}. Geomean over the 21 "
              f"layers of call 309's time / call 310's: ours "
              f"{geomean(old.call_us / suite.call_us.reindex(old.index)):.3f}, cuDNN "
              f"{geomean(old.cudnn_us / suite.cudnn_us.reindex(old.index)):.3f} (two "
              "machines of the same kind)."]
    lines += whole_suite_lines(suite)
    lines += tma_twin_lines()
    lines += small_m_lines()
    (HERE / "derived.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
