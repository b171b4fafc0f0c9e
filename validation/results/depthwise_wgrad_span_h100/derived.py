"""The README's numbers that combine committed files (CPU; no GPU needed).

    python validation/results/depthwise_wgrad_span_h100/derived.py > derived.md

Each comes from committed benchmark CSVs (every bench.md beside them names the GPU, the
versions and the command) and the committed H100 sweeps (data/sweeps/h100/, whose
sidecars name the same).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher import choosers, decide, set_chooser
from convdispatch.kernels.device import lookup

HERE = Path(__file__).parent
RES = HERE.parent
ROOT = HERE.parents[2]
C143 = RES / "grouped_halo_h100/call143"


def gmean(x) -> float:
    return float(np.exp(np.log(np.asarray(x, dtype=float)).mean()))


def bench(path: Path) -> pd.DataFrame:
    return pd.read_csv(path).set_index("problem_id")


def sweep(direction: str) -> pd.DataFrame:
    d = pd.read_csv(ROOT / f"data/sweeps/h100/bwd_{direction}.csv", low_memory=False)
    return d[d.ok == 1]


def latency(rows: pd.DataFrame, pid: str, cand: str) -> float:
    fam, cfg = cand.split(":", 1)
    r = rows[(rows.problem_id == pid) & (rows.family == fam) & (rows.config == cfg)]
    return float(r.latency_us.min())


def depthwise_against_call143() -> None:
    old_w, new_w = bench(C143 / "bwd_wgrad/bench.csv"), bench(HERE / "call150/bwd_wgrad/bench.csv")
    old_f, new_f = bench(C143 / "bwd_full/bench.csv"), bench(HERE / "call150/bwd_full/bench.csv")
    dw = new_w.index[new_w.category == "depthwise"]

    def ratio(a: pd.DataFrame, col_a: str, b: pd.DataFrame, col_b: str) -> float:
        return gmean(a.loc[dw, col_a] / b.loc[dw, col_b])

    print("## Depthwise, call 143 -> call 150 (geomean of time ratios over the 10 layers)\n")
    print(f"- our wgrad: {ratio(old_w, 'ours_us', new_w, 'ours_us'):.3f}x faster; cuDNN's "
          f"wgrad: {ratio(old_w, 'cudnn_us', new_w, 'cudnn_us'):.3f}x faster")
    print(f"- our one pass: overlapped {ratio(old_f, 'ours_us', new_f, 'ours_us'):.3f}x, "
          f"in order {ratio(old_f, 'in_order_us', new_f, 'in_order_us'):.3f}x faster")
    print(f"- our new times against call 143's cuDNN: wgrad "
          f"{ratio(old_w, 'cudnn_us', new_w, 'ours_us'):.2f}x, one pass "
          f"{ratio(old_f, 'cudnn_us', new_f, 'ours_us'):.2f}x overlapped, "
          f"{ratio(old_f, 'cudnn_us', new_f, 'in_order_us'):.2f}x in order\n")


def span_on_mobilenet() -> None:
    s = sweep("wgrad")
    ids = s[s.family == "wgrad_depthwise_span"].problem_id.unique()
    m = s[s.problem_id.isin(ids) & s.problem_id.str.startswith("mobilenet_v2")]
    best = m.groupby(["problem_id", "family"]).latency_us.min().unstack()
    span = best.pop("wgrad_depthwise_span")
    others = best.min(axis=1)
    cud = m.groupby("problem_id").cudnn_us.median()
    print("## wgrad_depthwise_span on MobileNetV2's 30 depthwise problems (sweep)\n")
    print(f"- others' best / span's best: geomean {gmean(others / span):.3f} "
          f"({(others / span).min():.2f}-{(others / span).max():.2f})")
    print(f"- best of all x cuDNN: {gmean(cud / others):.3f} without span, "
          f"{gmean(cud / np.minimum(span, others)):.3f} with it\n")


def rule_order_change() -> None:
    """The rule chooser's wgrad picks on call 152's ten layers, with and without the span
    rule, by the sweep's latencies of those picks."""
    spec, s = lookup("h100"), sweep("wgrad")
    pids = list(bench(HERE / "call152/bwd_wgrad_rule/bench.csv").index)
    set_chooser("rule")
    try:
        span_first = [decide(problem_by_id(p).geom, spec, direction="wgrad").candidate.id
                      for p in pids]
        saved, choosers.SPAN_WGRAD_MIN_DY = choosers.SPAN_WGRAD_MIN_DY, 1 << 62
        set_chooser(None)
        set_chooser("rule")  # a fresh decision cache for the changed rule
        rows_first = [decide(problem_by_id(p).geom, spec, direction="wgrad").candidate.id
                      for p in pids]
    finally:
        choosers.SPAN_WGRAD_MIN_DY = saved
        set_chooser(None)
    ratio = [latency(s, p, a) / latency(s, p, b)
             for p, a, b in zip(pids, rows_first, span_first, strict=True)]
    print("## Rule chooser, MobileNetV2 depthwise wgrad at batch 32 (sweep latencies of picks)\n")
    print(f"- the rows-first order over the span rule: {gmean(ratio):.2f}x the time, slower "
          f"on {sum(r > 1 for r in ratio)} of {len(ratio)}\n")


def overlap_runs() -> None:
    runs = {"143": C143 / "bwd_full/bench.csv", "150": HERE / "call150/bwd_full/bench.csv",
            "152a": HERE / "call152/bwd_full_1/bench.csv",
            "152b": HERE / "call152/bwd_full_2/bench.csv",
            "154": HERE / "call154/bwd_full_grouped/bench.csv"}
    print("## ResNeXt-50 stride-2 grouped layers: overlapped / in order, us\n")
    print("| layer | " + " | ".join(runs) + " | in order takes less time by |")
    print("|---|" + "---|" * (len(runs) + 1))
    for layer in ("layer3.0.conv2", "layer4.0.conv2"):
        pid = f"resnext50_32x4d/{layer}/n32/float16"
        cells, gains = [], []
        for path in runs.values():
            r = bench(path).loc[pid]
            cells.append(f"{r.ours_us:.1f} / {r.in_order_us:.1f}")
            gains.append(1 - r.in_order_us / r.ours_us)
        print(f"| {layer} | " + " | ".join(cells)
              + f" | {100 * min(gains):.0f}-{100 * max(gains):.0f}% |")
    print()


def video3d_picks() -> None:
    """Call 154's recorded picks (the models before the 3D rows) against call 155's sweep."""
    rec = bench(HERE / "call154/bwd_full_grouped/bench.csv")
    print("## ResNeXt3D-50's 14 grouped problems: call 154's picks in call 155's sweep\n")
    for i, direction in enumerate(("dgrad", "wgrad")):
        s = sweep(direction)
        v = s[s.set == "video3d"]
        picks, best, cud = [], [], []
        for pid, grp in v.groupby("problem_id"):
            picks.append(latency(v, pid, rec.loc[pid, "chosen"].split(" & ")[i]))
            best.append(grp.latency_us.min())
            cud.append(grp.cudnn_us.median())
        picks, best, cud = map(np.asarray, (picks, best, cud))
        print(f"- {direction}: picks {gmean(cud / picks):.2f}x cuDNN, sweep's best "
              f"{gmean(cud / best):.2f}x, efficiency {gmean(best / picks):.2f}")
    print()


def one_warp() -> None:
    """One-warp configs (out of the space since call 147) against the best multi-warp one,
    on the problems where they ran right."""
    s = sweep("wgrad")
    s = s[s.family == "wgrad_depthwise_span"]
    one = s.config.str.endswith("num_warps=1")
    r = (s[~one].groupby("problem_id").latency_us.min()
         / s[one].groupby("problem_id").latency_us.min()).dropna()
    print("## wgrad_depthwise_span's one-warp configs (call 147's sweep)\n")
    print(f"- best multi-warp time / best one-warp time: {r.min():.2f}-{r.max():.2f} over "
          f"{len(r)} problems\n")


def video3d_one_pass() -> None:
    old = bench(HERE / "call154/bwd_full_grouped/bench.csv")
    new = bench(HERE / "call156/bwd_full_grouped6/bench.csv")
    v = [p for p in new.index if p.startswith("video3d")]
    print("## ResNeXt3D-50's 14 grouped layers, one pass x cuDNN: call 154 -> call 156\n")
    for col, name in (("speedup_vs_cudnn", "overlapped"),
                      ("in_order_speedup_vs_cudnn", "in order")):
        print(f"- {name}: {gmean(old.loc[v, col]):.2f} -> {gmean(new.loc[v, col]):.2f}")
    print()


def main() -> int:
    print("Command: `python validation/results/depthwise_wgrad_span_h100/derived.py`.\n")
    depthwise_against_call143()
    span_on_mobilenet()
    rule_order_change()
    overlap_runs()
    video3d_picks()
    video3d_one_pass()
    one_warp()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
