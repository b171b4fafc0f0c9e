"""derived.md from this folder's files:

    cd validation/results/flat_filter_vectors_h100 && python3 derived.py > derived.md

Reads the probe of call 277 (filter tiles in vector loads against two bytes at a time),
the rows that `convdispatch retire` set aside in call 277 (``retired_*.csv.gz``) and the
same configs measured again there (``new_*.csv.gz``), the issue-6 suite of calls 278 and
279 against call 276's (``../filter_burst_h100/``), and the grouped layers' backward pass
of calls 278 and 281 against call 272's two runs (``../row_reuse_h100/``), and the L2
prefetch probe of call 280.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from convdispatch.validation.derived_tables import (
    SUITE_COLUMNS,
    gmean,
    heading,
    line,
    probe_lines,
    suite_category_line,
    suite_pairs,
    sweep_lines,
    table_head,
)

HERE = Path(__file__).parent
BEFORE = HERE.parent / "filter_burst_h100" / "call276"
BACKWARD_BEFORE = [HERE.parent / "row_reuse_h100" / "call272" / f"bwd_full_grouped6_{i}"
                   for i in (1, 2)]
SUITE = ("resnext50_32x4d/", "video3d/resnext3d_50.")
RUNS = ("call278", "call279")
NAMES = ("278", "279")


def vector_probe() -> list[str]:
    d = pd.read_csv(HERE / "call277" / "vectors_fp16.csv")
    return probe_lines(
        d.assign(x=d.scalar_us / d.vector_us),
        "Call 277: filter tiles in vector loads against two bytes at a time",
        "Each issue-6 grouped layer's fastest flat tile in the sweep, at its fastest ITEMS, "
        "both ways in turn (float16).", "scalar / vector (geomean)")


def prefetch_probe() -> list[str]:
    out = []
    for rows in (4, 32):
        d = pd.read_csv(HERE / "call280" / f"prefetch{rows}_fp16.csv")
        out += probe_lines(
            d.assign(x=d.plain_us / d.prefetch_us),
            f"Call 280: grouped_packed with a bulk L2 prefetch of its input rows, {rows} rows "
            "a prefetch (not kept)",
            "The issue-6 grouped layers where call 279's model chose grouped_packed, that "
            "config both ways in turn (float16).", "without / with (geomean)")
    return out


def suite_lines() -> list[str]:
    out = []
    grouped = []
    for run in RUNS:
        out += heading(f"The issue-6 suite: call {run[4:]} (model d102c50e1121) against call 276 "
                       "(82834fac9bd6)", "", SUITE_COLUMNS)
        for dtype in ("fp16", "bf16"):
            m = suite_pairs(HERE / run, BEFORE, dtype)
            out += [suite_category_line(dtype, cat, g) for cat, g in m.groupby("category")]
            grouped.append(m[m.category == "grouped"].assign(dtype=dtype, run=run))
        out.append("")
    g = pd.concat(grouped)
    wide = g.pivot_table(index=["problem_id", "dtype"], columns="run",
                         values=["call_us", "cudnn_us", "speedup_vs_cudnn"])
    first = g[g.run == RUNS[0]].set_index(["problem_id", "dtype"])
    out += ["Grouped layers (us; x cuDNN), call 276 and the two runs:", ""] + table_head(
        ["layer", "dtype", "choice 276 -> now", "ours 276", *NAMES, "cuDNN 276", *NAMES,
         "x cuDNN 276", *NAMES])
    for (pid, dtype), r in first.iterrows():
        fam, was = r.chosen.split(":")[0], r.chosen_old.split(":")[0]
        w = wide.loc[(pid, dtype)]
        out.append(line([pid.rsplit("/", 1)[0], dtype, fam if fam == was else f"{was} -> {fam}",
                         f"{r.call_us_old:.1f}", *(f"{w['call_us', c]:.1f}" for c in RUNS),
                         f"{r.cudnn_us_old:.1f}", *(f"{w['cudnn_us', c]:.1f}" for c in RUNS),
                         f"{r.speedup_vs_cudnn_old:.2f}",
                         *(f"{w['speedup_vs_cudnn', c]:.2f}" for c in RUNS)]))
    return out + [""]


def backward_lines() -> list[str]:
    new = pd.read_csv(HERE / "call278" / "bwd_full_grouped6" / "bench.csv")
    out = heading("One backward pass of the 21 grouped layers: call 278 (dgrad model "
                  "52254c184852) against call 272's two runs (30406f020844)", "",
                  ["run", "overlapped x cuDNN", "min", "our time 272 / 278",
                   "cuDNN's 272 / 278"])
    for i, path in enumerate(BACKWARD_BEFORE, 1):
        old = pd.read_csv(path / "bench.csv")
        m = new.merge(old, on="problem_id", suffixes=("", "_old"))
        out.append(line([f"272 run {i}", f"{gmean(m.speedup_vs_cudnn_old):.3f}",
                         f"{m.speedup_vs_cudnn_old.min():.2f}",
                         f"{gmean(m.ours_us_old / m.ours_us):.3f}",
                         f"{gmean(m.cudnn_us_old / m.cudnn_us):.3f}"]))
    out.append(line(["278", f"{gmean(new.speedup_vs_cudnn):.3f}",
                     f"{new.speedup_vs_cudnn.min():.2f}", "", ""]))
    again = pd.read_csv(HERE / "call281" / "bwd_full_grouped6" / "bench.csv")
    m = new.merge(again, on="problem_id", suffixes=("", "_281"))
    out += ["", f"Call 281, the same pass again: {gmean(m.speedup_vs_cudnn_281):.3f}x (min "
            f"{m.speedup_vs_cudnn_281.min():.2f}); our time 278 / 281 "
            f"{gmean(m.ours_us / m.ours_us_281):.3f}, cuDNN's "
            f"{gmean(m.cudnn_us / m.cudnn_us_281):.3f}; in order "
            f"{gmean(m.in_order_speedup_vs_cudnn):.3f}x in 278, "
            f"{gmean(m.in_order_speedup_vs_cudnn_281):.3f}x in 281.", "",
            *table_head(["layer", "in order 278 (us)", "281"])]
    far = m[m.in_order_us > 1.3 * m.in_order_us_281]
    out += [line([r.problem_id.rsplit("/", 1)[0], f"{r.in_order_us:.1f}",
                  f"{r.in_order_us_281:.1f}"]) for _, r in far.iterrows()]
    return out + [""]


def main() -> None:
    lines = ["# Filter tiles in vector loads: derived tables", "",
             "Made by `derived.py` from this folder's files.", ""]
    lines += vector_probe()
    for name, title in (("train", "forward, train plan"), ("holdout", "forward, holdout plan")):
        lines += sweep_lines(HERE, name, title, "call 277", SUITE)
    lines += suite_lines()
    lines += backward_lines()
    lines += prefetch_probe()
    print("\n".join(lines).rstrip())


if __name__ == "__main__":
    main()
