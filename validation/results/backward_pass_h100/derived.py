"""The tables of README.md from this folder's files, the backward sweep and the shipped
models (CPU).

    python3 validation/results/backward_pass_h100/derived.py \
        > validation/results/backward_pass_h100/derived.md
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
PREVIOUS = ROOT / "validation" / "results" / "backward_direction_h100"
# Calls 222 and 225's runs of one backward pass (the model deciding whether passes fuse).
RUNS = [("call222", r) for r in ("bwd_full_grouped6_1", "bwd_full_grouped6_2",
                                 "bwd_full_issue2", "bwd_full_issue6", "bwd_full_grouped6_3",
                                 "bwd_full_grouped6_4", "bwd_full_grouped6_5")] + [
    ("call225", f"bwd_full_grouped6_{i}") for i in range(6, 10)]
SUITE = {"bwd_full_issue2": "issue-2 suite", "bwd_full_issue6": "issue-6 suite"}
# The previous session's seven runs of the issue-6 grouped layers (same layers, fusing by
# the rule's gate).
BEFORE = [("call215", "bwd_full_grouped6"), ("call215", "bwd_full_issue6"),
          ("call217", "bwd_full_grouped6"), ("call217", "bwd_full_issue6"),
          ("call218", "bwd_grouped6"), ("call218", "bwd_full_grouped6_2"),
          ("call218", "bwd_full_grouped6_3")]


def bench(folder: Path) -> pd.DataFrame:
    b = pd.read_csv(folder / "bench.csv")
    return b[b.direction == "full"]


def short(pid: str) -> str:
    return pid.replace("/float16", "").replace("video3d/", "")


def passes() -> list[float]:
    print("## One backward pass against cuDNN's `convolution_backward` (calls 222, 225)\n")
    print("Geomean (min) of cuDNN / ours, as `autograd.gradients` runs a pass in a CUDA "
          "graph.\n")
    print("| call | run | dense | grouped | depthwise |")
    print("|---|---|---|---|---|")
    grouped = []
    for call, run in RUNS:
        b = bench(HERE / call / run)
        cells = []
        for cat in ("dense", "grouped", "depthwise"):
            s = b[b.category == cat]
            sp = s.cudnn_us / s.ours_us
            cells.append(f"{gm(sp):.3f} ({sp.min():.2f}), {len(s)} layers" if len(s) else "-")
            if cat == "grouped" and run != "bwd_full_issue2":
                grouped.append(gm(sp))
        name = SUITE.get(run, "issue-6 grouped layers")
        print(f"| {call} | {run.replace('bwd_full_', '')} ({name}) | " + " | ".join(cells)
              + " |")
    before = [gm((lambda s: s.cudnn_us / s.ours_us)(
        (lambda b: b[b.category == "grouped"])(bench(PREVIOUS / c / r))))
        for c, r in BEFORE]
    print(f"\nIssue-6 grouped layers, {len(grouped)} runs: "
          + ", ".join(f"{v:.3f}" for v in grouped)
          + f"; median {np.median(grouped):.3f}, lowest {min(grouped):.3f}. The previous "
          f"session's {len(before)} runs (fusing by the rule's gate, "
          "`backward_direction_h100`): median "
          f"{np.median(before):.3f}, range {min(before):.3f}-{max(before):.3f}.\n")
    return grouped


def grouped_layers() -> None:
    print("## The issue-6 grouped layers (us)\n")
    print("`runs`: ours in the ten runs of calls 222 and 225 (min-max); `before`: call 218's "
          "second run, "
          "fusing by the rule's gate. `pass`: what the pass ran (the backward model's "
          "choice).\n")
    frames = [bench(HERE / c / r) for c, r in RUNS if r != "bwd_full_issue2"]
    frames = [f[f.category == "grouped"].set_index("problem_id") for f in frames]
    old = bench(PREVIOUS / "call218" / "bwd_full_grouped6_2").set_index("problem_id")
    ids = frames[0].index
    same = all((f.loc[ids, "chosen"] == frames[0].loc[ids, "chosen"]).all() for f in frames)
    print(f"Choices identical in all {len(frames)} runs: {same}.\n")
    print("| layer | pass | ours (runs) | cuDNN (runs) | cuDNN / ours (median) | before: "
          "ours / cuDNN | before: pass |")
    print("|---|---|---|---|---|---|---|")
    for pid in ids:
        ours = [f.loc[pid, "ours_us"] for f in frames]
        cud = [f.loc[pid, "cudnn_us"] for f in frames]
        sp = np.median([c / o for c, o in zip(cud, ours)])
        kind = "fused" if "->" in frames[0].loc[pid, "chosen"] else "pair"
        okind = "fused" if "->" in old.loc[pid, "chosen"] else "pair"
        print(f"| {short(pid)} | {kind} | {min(ours):.1f}-{max(ours):.1f} | "
              f"{min(cud):.1f}-{max(cud):.1f} | {sp:.2f} | {old.loc[pid, 'ours_us']:.1f} / "
              f"{old.loc[pid, 'cudnn_us']:.1f} | {okind} |")
    print()


def _decisions(problems) -> pd.DataFrame:
    """Per problem: the shipped model's pick and the rule's (``rule_fuses``: the fused
    kernel's rule config, else the pair), with the H100's spec."""
    from convdispatch.data.problems import load_problems
    from convdispatch.dispatcher import api, fused_pair, registry
    from convdispatch.dispatcher.selection import RULE
    from convdispatch.kernels import backward_grouped_flat as fused
    from convdispatch.kernels.device import KNOWN

    dev = KNOWN["h100"]
    rows = []
    for p in load_problems(",".join(problems)):
        g = p.geometry() if hasattr(p, "geometry") else p.geom
        model = api.decide(g, dev, direction="backward").candidate.id
        rule = (f"backward_grouped_flat:{fused.rule_config(g, dev)}"
                if fused_pair.rule_fuses(g, dev) else "backward_pair:")
        assert RULE.choose(g, registry.candidates(g, dev, "backward"), dev).candidate.id == rule
        rows.append((p.id, model, rule))
    return pd.DataFrame(rows, columns=["problem_id", "model", "rule"]).set_index("problem_id")


def sweep() -> None:
    df = pd.read_csv(SWEEP)
    df["cand"] = df.family + ":" + df.config.fillna("")
    lat = df.set_index(["problem_id", "cand"]).latency_us
    fused = df[df.family == "backward_grouped_flat"].groupby("problem_id").latency_us.min()
    best = df.groupby("problem_id").latency_us.min()
    pair = df[df.family == "backward_pair"].set_index("problem_id").latency_us[best.index]
    cud = df.groupby("problem_id").cudnn_us.first()
    dec = _decisions(sorted(best.index))
    model = pd.Series([lat[(p, c)] for p, c in dec.model.items()], index=dec.index)
    rule = pd.Series([lat[(p, c)] for p, c in dec.rule.items()], index=dec.index)
    meta = json.loads((MODEL / "meta.json").read_text())
    cv = meta["metrics"]["cv"]
    print("## The backward sweep: fused configs and the pair (calls 216, 219, 220, 221)\n")
    ok = int(df.ok.sum())
    print(f"{len(df)} rows ({ok} ok) on {best.size} problems: "
          f"{(df.family == 'backward_grouped_flat').sum()} fused configs, "
          f"{(df.family == 'backward_pair').sum()} pairs. The pair is faster than the "
          f"fused kernel's best config on {(pair < fused).sum()} problems.\n")
    print(f"Shipped model {meta['identity']}: out-of-fold efficiency (5-fold, grouped by "
          f"problem) {cv['efficiency_geomean']:.3f} (P10 {cv['efficiency_p10']:.3f}, min "
          f"{cv['efficiency_min']:.3f}), top-1 {cv['top1']:.2f}.\n")
    print("| picks | efficiency (best / picked), geomean | min | problems not the best | "
          "cuDNN / picked |")
    print("|---|---|---|---|---|")
    for name, s in (("model (in-sample)", model), ("rule (`rule_fuses`)", rule),
                    ("always the fused kernel's best", fused), ("always the pair", pair)):
        eff = best / s
        print(f"| {name} | {gm(eff):.4f} | {eff.min():.3f} | {(eff < 0.999).sum()} | "
              f"{gm(cud / s):.3f} |")
    print()
    print("Per problem (us): the fused kernel's best config, the pair, what the model and "
          "the rule pick, cuDNN's pass.\n")
    print("| problem | fused best | pair | model | rule | cuDNN | model picks |")
    print("|---|---|---|---|---|---|---|")
    for pid in best.index:
        kind = "pair" if dec.model[pid].startswith("backward_pair") else "fused"
        print(f"| {short(pid)} | {fused[pid]:.1f} | {pair[pid]:.1f} | {model[pid]:.1f} | "
              f"{rule[pid]:.1f} | {cud[pid]:.1f} | {kind} |")
    print()


def held_out_3d() -> None:
    """How much of the 3D choice comes from training on the 3D layers: the shipped model's
    picks against those of the model trained without them (the reports' per-problem
    tables, sweep latencies)."""
    reports = ROOT / "validation" / "reports"
    held = pd.read_csv(reports / "h100_backward3d_holdout" / "per_problem.csv",
                       index_col="problem_id")
    shipped = pd.read_csv(reports / "h100_backward_all" / "per_problem.csv",
                          index_col="problem_id").loc[held.index]
    ratio = held.model_us / shipped.model_us
    print("## The 3D choices in-sample and held out (sweep latencies, us)\n")
    print("The shipped model trained on ResNeXt3D-50's rows; `h100_backward3d_holdout`'s "
          "model on the 2D rows only.\n")
    print("| problem | shipped pick | us | held-out pick | us |")
    print("|---|---|---|---|---|")
    for pid in held.index:
        print(f"| {short(pid)} | {shipped.loc[pid, 'model_choice'].split(';')[0]} | "
              f"{shipped.loc[pid, 'model_us']:.1f} | "
              f"{held.loc[pid, 'model_choice'].split(';')[0]} | "
              f"{held.loc[pid, 'model_us']:.1f} |")
    print(f"\nHeld-out picks / shipped picks: geomean {gm(ratio):.3f} over {len(ratio)} "
          "problems, all of them issue-6 grouped layers: on the suite's 21-layer geomean "
          f"that is a factor {gm(ratio) ** (len(ratio) / 21):.3f}.\n")


def fused_3d_pass() -> None:
    """Call 220: the fused kernel in 3D with the old rule deciding where passes fuse,
    against call 218's pass (the 2D layers run the same fused configs in both)."""
    new = bench(HERE / "call220" / "bwd_full_grouped6").set_index("problem_id")
    old = bench(PREVIOUS / "call218" / "bwd_full_grouped6_2").set_index("problem_id")
    print("## The fused kernel in 3D under the old rule (call 220 against call 218, us)\n")
    print("| layer | call 220 ours | call 218 ours | ratio | call 220 fused |")
    print("|---|---|---|---|---|")
    for pid in new.index:
        fused = "->" in new.loc[pid, "chosen"]
        print(f"| {short(pid)} | {new.loc[pid, 'ours_us']:.1f} | {old.loc[pid, 'ours_us']:.1f} "
              f"| {new.loc[pid, 'ours_us'] / old.loc[pid, 'ours_us']:.3f} | "
              f"{'yes' if fused else 'no'} |")
    two_d = [p for p in new.index if "resnext3d" not in p]
    ratio = new.loc[two_d, "ours_us"] / old.loc[two_d, "ours_us"]
    print(f"\nGrouped pass geomean cuDNN / ours: call 220 "
          f"{gm(new.cudnn_us / new.ours_us):.3f}, call 218 {gm(old.cudnn_us / old.ours_us):.3f}."
          f" ResNeXt-50's {len(two_d)} layers: call 220 / call 218 from {ratio.min():.3f} to "
          f"{ratio.max():.3f}.\n")


def main() -> None:
    os.environ.setdefault("TRITON_INTERPRET", "1")
    warnings.simplefilter("ignore")
    print("# Derived tables (made by derived.py)\n")
    passes()
    grouped_layers()
    fused_3d_pass()
    sweep()
    held_out_3d()


if __name__ == "__main__":
    main()
