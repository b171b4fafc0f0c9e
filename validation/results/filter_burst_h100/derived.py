"""derived.md from this folder's files:

    cd validation/results/filter_burst_h100 && python3 derived.py > derived.md

Reads the probes of calls 273 (four buffers) and 274 (filter tiles a plane at once), the
rows that `convdispatch retire` set aside before call 275 (``retired_*.csv.gz``), the
same configs measured again in call 275 (``new_*.csv.gz``), and the issue-6 suite of call
276 here against call 269's (``../row_reuse_h100/``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from convdispatch.validation.derived_tables import (
    GROUPED_SUITE,
    heading,
    line,
    probe_lines,
    suite_lines,
    summary,
    sweep_lines,
)

HERE = Path(__file__).parent
BEFORE = HERE.parent / "row_reuse_h100" / "call269"


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
    return probe_lines(
        d.assign(x=d.tap_us / d.burst_us),
        "Call 274: filter tiles a plane at once against tap by tap",
        "The issue-6 grouped layers' two fastest flat tiles in the sweep, at their fastest "
        "ITEMS and at 2, both ways in turn (float16).", "tap by tap / burst (geomean)")


def main() -> None:
    lines = ["# Filter tiles a plane at once: derived tables", "",
             "Made by `derived.py` from this folder's files.", ""]
    lines += four_buffers()
    lines += burst_probe()
    for name, title in (("train", "forward, train plan"), ("holdout", "forward, holdout plan"),
                        ("bwd_dgrad", "dgrad twin")):
        lines += sweep_lines(HERE, name, title, "call 275", GROUPED_SUITE)
    lines += suite_lines(BEFORE, HERE / "call276", "The issue-6 suite: call 276 (model "
                         "82834fac9bd6) against call 269 (24623ad94dae)", ("call 269", "call 276"))
    print("\n".join(lines).rstrip())


if __name__ == "__main__":
    main()
