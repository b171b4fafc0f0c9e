"""The tables of README.md from this folder's files (CPU).

    python3 validation/results/split_reduction_h100/derived.py > .../derived.md
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
PREV = HERE.parent / "flat_copy_runs_h100"
CATS = ("dense", "grouped", "depthwise")


def gm(x) -> float:
    return float(np.exp(np.log(np.asarray(x, dtype=float)).mean()))


def family(cand: str) -> str:
    return cand.split(":")[0]


def dependent_launch() -> None:
    """Call 183: the reduction pass launched as a programmatic dependent."""
    d = pd.read_csv(HERE / "call183" / "dependent.csv")
    d["family"] = d.chosen.map(family)
    print("## Reduction passes launched as dependents (call 183)\n")
    print("Time with it / without (below 1: faster), a benchmark's split choices; every "
          "output equal bit for bit.\n")
    print("| family | choices | dependent | range | released from the start |")
    print("|---|---|---|---|---|")
    for fam, g in d.groupby("family"):
        r = g.dependent_us / g.plain_us
        rel = g.released_us / g.plain_us if g.released_us.notna().any() else None
        print(f"| {fam} | {len(g)} | {gm(r):.3f} | {r.min():.2f}-{r.max():.2f} | "
              f"{'-' if rel is None else f'{gm(rel):.3f}'} |")
    eq = bool(d.dependent_equal.all() and d.released_equal.dropna().astype(bool).all())
    print(f"\nAll {len(d)} outputs equal to the plain launch's: {eq}.")


def fused() -> None:
    """Call 184: the split reduction in wgrad_grouped_flat's kernel against the pass."""
    d = pd.read_csv(HERE / "call184" / "fused.csv")
    print("\n## Slices added in the kernel against the pass (call 184, taken out)\n")
    print("| layer | config | slices | pass us | fused us | fused / pass |")
    print("|---|---|---|---|---|---|")
    for _, r in d.iterrows():
        cfg = r.candidate.split(":")[1].replace(";num_stages=2", "")
        print(f"| {r.problem_id.split('/')[1]} | {cfg} | {r.slices} | {r.pass_us:.1f} | "
              f"{r.fused_us:.1f} | {r.fused_over_pass:.3f} |")
    best_pass = d.groupby("problem_id").pass_us.min()
    best_fused = d[d.slices <= 8].groupby("problem_id").fused_us.min()
    common = best_pass.index.intersection(best_fused.index)
    print(f"\nA layer's best fused config (up to 8 slices) / its best config with the pass: "
          f"{gm(best_fused[common] / best_pass[common]):.3f} "
          f"({(best_fused[common] / best_pass[common]).min():.2f}-"
          f"{(best_fused[common] / best_pass[common]).max():.2f}, {len(common)} layers).")


def copy_runs() -> None:
    """Call 186: flat-grid copy runs of 16 positions against 32."""
    d = pd.read_csv(HERE / "call186" / "copy_run.csv")
    print("\n## Copy runs of 16 positions against 32 (call 186, not kept)\n")
    print("| direction | configs | time 16 / 32 | range | equal |\n|---|---|---|---|---|")
    for k, g in d.groupby("direction"):
        print(f"| {k} | {len(g)} | {gm(g.ratio):.3f} | {g.ratio.min():.2f}-"
              f"{g.ratio.max():.2f} | {bool(g.equal.all())} |")


def timelines() -> None:
    """Call 187: kernel timelines of one backward pass (median of five replays)."""
    d = pd.read_csv(HERE / "call187" / "trace.csv")
    print("\n## Kernel timelines of one backward pass in a CUDA graph (call 187)\n")
    print("Per side, the kernels of replay 1 (start us from the first kernel, duration; "
          "negative gap: the kernel started before the one before it ended).\n")
    print("| layer | side | kernels (start, duration) | span us |\n|---|---|---|---|")
    for (pid, side), g in d[d.replay == 1].groupby(["problem_id", "side"], sort=False):
        ks = "; ".join(f"{k[:30]} ({s:.1f}, {u:.1f})"
                       for k, s, u in zip(g.kernel, g.start_us, g.dur_us))
        span = (g.start_us + g.dur_us).max()
        print(f"| {pid.split('/')[0]} {pid.split('/')[1]} | {side} | {ks} | {span:.1f} |")


def overlap_order() -> None:
    """Calls 194-195: overlapped gradients, dX's kernels first against dW's."""
    d = pd.read_csv(HERE / "call194" / "trace_overlapped.csv")
    print("\n## Overlapped gradients: which kernels go first (calls 194-195)\n")
    print("Call 194, replay 2 as a CUDA graph captures it (dX's kernels launched first; "
          "start us, duration):\n")
    print("| layer | kernels | span us |\n|---|---|---|")
    for pid, g in d[(d.replay == 2) & (d.side == "ours_overlapped")].groupby(
            "problem_id", sort=False):
        ks = "; ".join(f"{k[:26]} ({s:.1f}, {u:.1f})"
                       for k, s, u in zip(g.kernel, g.start_us, g.dur_us))
        print(f"| {pid.split('/')[1]} | {ks} | {(g.start_us + g.dur_us).max():.1f} |")
    o = pd.read_csv(HERE / "call195" / "order.csv")
    chosen = bench(HERE / "call190/bwd_full").set_index("problem_id").chosen
    o["wgrad_family"] = [family(chosen[p].split(" & ")[1]) for p in o.problem_id]
    print("\nCall 195, CUDA-graph us of one overlapped pass, dW's kernels first / dX's "
          "(outputs equal bit for bit: "
          f"{bool(o.equal.all())}):\n")
    print("| wgrad family | layers | wgrad first / dgrad first | range |\n|---|---|---|---|")
    for fam, g in o.groupby("wgrad_family"):
        print(f"| {fam} | {len(g)} | {gm(g.ratio):.3f} | {g.ratio.min():.2f}-"
              f"{g.ratio.max():.2f} |")


def floor() -> None:
    """Calls 188-189: the pass against leaner ones."""
    d = pd.read_csv(HERE / "call189" / "floor.csv")
    print("\n## What the reduction pass costs (call 189; call 188 without const_idx)\n")
    print("CUDA-graph us of the chosen wgrad with its pass as it was, with constant "
          "divisors (kept), as a lean sum in workspace order, as a dependent kernel that "
          "only waits, and without it.\n")
    print("| layer | family, split | current | const_idx | flat_sum | wait_only | none |")
    print("|---|---|---|---|---|---|---|")
    for _, r in d.iterrows():
        split = r.candidate.split("SPLIT_K=")[1].split(";")[0]
        print(f"| {r.problem_id.split('/')[0]} {r.problem_id.split('/')[1]} | "
              f"{family(r.candidate)}, {split} | {r.current_us:.1f} | {r.const_idx_us:.1f} | "
              f"{r.flat_sum_us:.1f} | {r.wait_only_us:.1f} | {r.none_us:.1f} |")
    print(f"\nconst_idx / current: {gm(d.const_idx_us / d.current_us):.3f} "
          f"({(d.const_idx_us / d.current_us).min():.2f}-"
          f"{(d.const_idx_us / d.current_us).max():.2f}).")


def bench(path: Path) -> pd.DataFrame:
    return pd.read_csv(path / "bench.csv")


def benches() -> None:
    """Calls 190-193 against the thirty-first session's calls 180-181."""
    print("\n## Benchmarks (calls 190-193; before: calls 180-181)\n")
    print("| suite | category | layers | now | second run | 180/181 | time now / 180-181: "
          "ours, cuDNN |\n|---|---|---|---|---|---|---|")
    runs = [("issue-2 one pass, overlapped", "call190/bwd_full", "call191/bwd_full",
             "call180/bwd_full", "speedup_vs_cudnn"),
            ("issue-2 one pass, in order", "call190/bwd_full", "call191/bwd_full",
             "call180/bwd_full", "in_order_speedup_vs_cudnn"),
            ("issue-6 fp16", "call191/issue6_fp16", None, "call180/issue6_fp16",
             "speedup_vs_cudnn"),
            ("issue-6 bf16", "call193/issue6_bf16", None, "call181/issue6_bf16",
             "speedup_vs_cudnn")]
    for name, now, second, before, col in runs:
        dn, db = bench(HERE / now), bench(PREV / before)
        d2 = bench(HERE / second) if second else None
        ours = ("in_order_us" if col.startswith("in_order")
                else "ours_us" if "ours_us" in dn else "call_us")
        for cat in CATS:
            n = dn[dn.category == cat][col]
            s = f"{gm(d2[d2.category == cat][col]):.3f}" if d2 is not None else "-"
            b = db[db.category == cat][col]
            m = dn[dn.category == cat].merge(db, on="problem_id", suffixes=("", "_b"))
            print(f"| {name} | {cat} | {len(n)} | {gm(n):.3f} (min {n.min():.2f}) | {s} | "
                  f"{gm(b):.3f} | {gm(m[ours] / m[ours + '_b']):.3f}, "
                  f"{gm(m.cudnn_us / m.cudnn_us_b):.3f} |")
    for name, now in (("issue-6 fp16", "call191/issue6_fp16"),
                      ("issue-6 bf16", "call193/issue6_bf16")):
        d = bench(HERE / now)
        top = d.loc[d.tflops.idxmax()]
        print(f"\n{name}: highest rate {top.tflops:.0f} TFLOP/s, {top.problem_id}")
    print("\nGrouped layers, issue-2 one pass in order (us, ours / cuDNN, x cuDNN):\n")
    print("| layer | call 190 | call 191 | call 180 |\n|---|---|---|---|")
    runs = [bench(HERE / "call190/bwd_full"), bench(HERE / "call191/bwd_full"),
            bench(PREV / "call180/bwd_full")]
    for pid in runs[0][runs[0].category == "grouped"].problem_id:
        cells = []
        for d in runs:
            r = d[d.problem_id == pid].iloc[0]
            cells.append(f"{r.in_order_us:.1f} / {r.cudnn_us:.1f}, "
                         f"x{r.in_order_speedup_vs_cudnn:.2f}")
        print(f"| {pid.split('/')[1]} | " + " | ".join(cells) + " |")
    print("\nGrouped gradients each alone (call 190 against 181):\n")
    print("| direction | now | 181 | min now | time now / 181: ours, cuDNN |")
    print("|---|---|---|---|---|")
    dn, db = bench(HERE / "call190/bwd_grouped"), bench(PREV / "call181/bwd_grouped")
    for d in ("dgrad", "wgrad"):
        n, b = dn[dn.direction == d].speedup_vs_cudnn, db[db.direction == d].speedup_vs_cudnn
        m = dn[dn.direction == d].merge(db[db.direction == d], on="problem_id",
                                        suffixes=("", "_b"))
        print(f"| {d} | {gm(n):.3f} | {gm(b):.3f} | {n.min():.2f} | "
              f"{gm(m.ours_us / m.ours_us_b):.3f}, {gm(m.cudnn_us / m.cudnn_us_b):.3f} |")


def after_order() -> None:
    """Calls 196-198: the issue-2 one pass after ``overlap_first``."""
    print("\n## One backward pass after dW's kernels go first (calls 196-198)\n")
    print("| category | layers | overlapped | in order | call 190 overlapped | "
          "time / call 190: ours overlapped, ours in order, cuDNN |")
    print("|---|---|---|---|---|---|")
    old = bench(HERE / "call190/bwd_full")
    for run, cats in (("call196", ("grouped", "depthwise")), ("call197",
                      ("grouped", "depthwise")), ("call198", ("dense",))):
        d = bench(HERE / run / "bwd_full")
        for cat in cats:
            n = d[d.category == cat]
            m = n.merge(old, on="problem_id", suffixes=("", "_o"))
            print(f"| {cat} ({run}) | {len(n)} | {gm(n.speedup_vs_cudnn):.3f} (min "
                  f"{n.speedup_vs_cudnn.min():.2f}) | {gm(n.in_order_speedup_vs_cudnn):.3f} "
                  f"| {gm(m.speedup_vs_cudnn_o):.3f} | {gm(m.ours_us / m.ours_us_o):.3f}, "
                  f"{gm(m.in_order_us / m.in_order_us_o):.3f}, "
                  f"{gm(m.cudnn_us / m.cudnn_us_o):.3f} |")
    print("\nGrouped layers overlapped (call 196; call 190), us ours / cuDNN:\n")
    print("| layer | call 196 | call 190 |\n|---|---|---|")
    d = bench(HERE / "call196/bwd_full")
    for pid in d[d.category == "grouped"].problem_id:
        a, b = d[d.problem_id == pid].iloc[0], old[old.problem_id == pid].iloc[0]
        print(f"| {pid.split('/')[1]} | {a.ours_us:.1f} / {a.cudnn_us:.1f}, "
              f"x{a.speedup_vs_cudnn:.2f} | {b.ours_us:.1f} / {b.cudnn_us:.1f}, "
              f"x{b.speedup_vs_cudnn:.2f} |")


if __name__ == "__main__":
    print("# Derived tables (split_reduction_h100)\n")
    dependent_launch()
    fused()
    copy_runs()
    timelines()
    overlap_order()
    floor()
    benches()
    after_order()
