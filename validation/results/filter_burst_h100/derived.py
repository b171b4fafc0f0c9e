"""derived.md from this folder's files:

    cd validation/results/filter_burst_h100 && python3 derived.py > derived.md

Reads the probes of calls 273 (four buffers) and 274 (filter tiles a plane at once), the
rows that `convdispatch retire` set aside before call 275 (``retired_*.csv.gz``), the
same configs measured again in call 275 (``new_*.csv.gz``), and the issue-6 suite of call
276 here against call 269's (``../row_reuse_h100/``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
BEFORE = HERE.parent / "row_reuse_h100" / "call269"
SUITE = ("resnext50_32x4d/", "video3d/resnext3d_50.")


def gmean(x) -> float:
    return float(np.exp(np.log(np.asarray(x, dtype=float)).mean()))


def line(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table_head(columns: list[str]) -> list[str]:
    return [line(columns), line(["---"] * len(columns))]


def heading(title: str, text: str, columns: list[str]) -> list[str]:
    """A section's title, its sentence and the head of its table."""
    return [f"## {title}", ""] + ([text, ""] if text else []) + table_head(columns)


def summary(x: pd.Series) -> list:
    """Geomean, count, min and max of a series of ratios, as table cells."""
    return [f"{gmean(x):.3f}", len(x), f"{x.min():.2f}", f"{x.max():.2f}"]


def four_buffers() -> list[str]:
    d = pd.read_csv(HERE / "call273" / "buffers_fp16.csv")
    best = d.groupby(["problem_id", "num_stages"]).us.min().unstack().dropna()
    same = d.pivot_table(index=["problem_id", "BLOCK_M", "BLOCK_N", "num_warps", "ITEMS"],
                         columns="num_stages", values="us").dropna()
    ratio = best[1] / best[3]
    return heading(
        "Call 273: four input buffers against two (not kept)",
        "Each issue-6 grouped layer's two fastest flat tiles, every ITEMS of the fill ladder "
        "(four buffers: where ITEMS x depth taps is a multiple of 4).",
        ["", "two buffers / four (geomean)", "pairs or layers", "min", "max",
         "four faster on"]) + [
        line(["same tile and ITEMS", *summary(same[1] / same[3]),
              int((same[3] < same[1]).sum())]),
        line(["best of a layer", *summary(ratio), int((ratio > 1).sum())]),
        "",
    ]


def burst_probe() -> list[str]:
    d = pd.read_csv(HERE / "call274" / "burst_fp16.csv")
    d["x"] = d.tap_us / d.burst_us
    d["dims"] = np.where(d.problem_id.str.startswith("video3d"), "3D", "2D")
    out = heading(
        "Call 274: filter tiles a plane at once against tap by tap",
        "The issue-6 grouped layers' two fastest flat tiles in the sweep, at their fastest "
        "ITEMS and at 2, both ways in turn (float16).",
        ["layers", "tap by tap / burst (geomean)", "configs", "min", "max", "same bits"])
    for dims, g in [*d.groupby("dims"), ("all", d)]:
        out.append(line([dims, *summary(g.x), f"{int(g.same_bits.sum())} of {len(g)}"]))
    return out + [""]


def pairs(name: str) -> pd.DataFrame:
    keys = ["problem_id", "family", "config"]
    old = pd.read_csv(HERE / f"retired_{name}.csv.gz")
    new = pd.read_csv(HERE / f"new_{name}.csv.gz")
    m = old[keys + ["latency_us"]].merge(new[keys + ["latency_us", "status"]], on=keys,
                                         suffixes=("_old", "_new"))
    m["x"] = m.latency_us_old / m.latency_us_new
    m["dims"] = np.where(m.problem_id.str.startswith("video3d"), "3D", "2D")
    m["block_n"] = m.config.str.extract(r"BLOCK_N=(\d+)")[0].astype(int)
    return m


def sweep_lines(name: str, title: str) -> list[str]:
    m = pairs(name)
    status = ", ".join(f"{k} {v}" for k, v in m.status.value_counts().items())
    out = heading(f"{title}: {len(m)} configs measured again (call 275)",
                  f"All new rows {status}.",
                  ["dims", "block_n", "old / new (geomean)", "rows", "min", "max"])
    for (dims, bn), g in [*m.groupby(["dims", "block_n"]), (("all", ""), m)]:
        out.append(line([dims, bn, *summary(g.x)]))
    best = m.groupby("problem_id")[["latency_us_old", "latency_us_new"]].min()
    bx = best.latency_us_old / best.latency_us_new
    out += ["", f"The family's best row a problem, old / new: {gmean(bx):.3f}x over "
            f"{len(bx)} problems (faster on {int((bx > 1.01).sum())}, slower on "
            f"{int((bx < 0.99).sum())}, min {bx.min():.3f}, max {bx.max():.3f}).", ""]
    suite = best[best.index.str.startswith(SUITE)]
    if len(suite):
        out += table_head(["problem", "before (us)", "now (us)"])
        out += [line([p, f"{r.latency_us_old:.1f}", f"{r.latency_us_new:.1f}"])
                for p, r in suite.iterrows()]
        out.append("")
    return out


def suite_lines() -> list[str]:
    out = heading("The issue-6 suite: call 276 (model 82834fac9bd6) against call 269 "
                  "(24623ad94dae)", "",
                  ["dtype", "category", "x cuDNN before", "now", "our time before / now",
                   "cuDNN's before / now", "choices changed"])
    rows = []
    for dtype in ("fp16", "bf16"):
        new = pd.read_csv(HERE / "call276" / f"issue6_{dtype}" / "bench.csv")
        old = pd.read_csv(BEFORE / f"issue6_{dtype}" / "bench.csv")
        m = new.merge(old, on=["problem_id", "category"], suffixes=("", "_old"))
        for cat, g in m.groupby("category"):
            out.append(line([dtype, cat, f"{gmean(g.speedup_vs_cudnn_old):.3f}",
                             f"{gmean(g.speedup_vs_cudnn):.3f}",
                             f"{gmean(g.call_us_old / g.call_us):.3f}",
                             f"{gmean(g.cudnn_us_old / g.cudnn_us):.3f}",
                             int((g.chosen != g.chosen_old).sum())]))
        rows.append(m[m.category == "grouped"].assign(dtype=dtype))
    out += ["", "Grouped layers (us; x cuDNN):", ""] + table_head(
        ["layer", "dtype", "choice before -> now", "ours before", "now", "cuDNN before",
         "now", "x cuDNN now"])
    for g in rows:
        for _, r in g.iterrows():
            fam = r.chosen.split(":")[0]
            was = r.chosen_old.split(":")[0]
            out.append(line([r.problem_id.rsplit("/", 1)[0], r["dtype"],
                             fam if fam == was else f"{was} -> {fam}",
                             f"{r.call_us_old:.1f}", f"{r.call_us:.1f}",
                             f"{r.cudnn_us_old:.1f}", f"{r.cudnn_us:.1f}",
                             f"{r.speedup_vs_cudnn:.2f}"]))
    return out + [""]


def main() -> None:
    lines = ["# Filter tiles a plane at once: derived tables", "",
             "Made by `derived.py` from this folder's files.", ""]
    lines += four_buffers()
    lines += burst_probe()
    lines += sweep_lines("train", "forward, train plan")
    lines += sweep_lines("holdout", "forward, holdout plan")
    lines += sweep_lines("bwd_dgrad", "dgrad twin")
    lines += suite_lines()
    print("\n".join(lines).rstrip())


if __name__ == "__main__":
    main()
