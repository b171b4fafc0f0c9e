"""The grouped_flat rows the H100 sweep CSVs lack (the configs added since: TMA, one item a
program, 64 wide), and the forward sweeps' past pace, into missing_rows.txt (CPU):

    python3 validation/results/wide_tiles_h200/missing_rows.py

A candidate is the family's on a plan's problem (without its dead taps) for the H100, as
``convdispatch sweep --families grouped_flat`` would enumerate it; a row is missing where
the plan's CSV has none of that problem and config (the sweep times only those).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from convdispatch.data.problems import load_problems
from convdispatch.dispatcher import registry
from convdispatch.kernels.dead_taps import trim_dead_taps
from convdispatch.kernels.device import KNOWN

HERE = Path(__file__).parent
SWEEPS = HERE.parents[2] / "data" / "sweeps" / "h100"


def kind(cfg) -> str:
    if cfg["BLOCK_N"] == 64:
        return "64-wide"
    if cfg.get("TMA"):
        return "TMA"
    return "ITEMS=1" if cfg["ITEMS"] == 1 else "other"


def main() -> None:
    lines = ["command: python3 validation/results/wide_tiles_h200/missing_rows.py", ""]
    for plan in ("train", "holdout"):
        rows = pd.read_csv(SWEEPS / f"{plan}.csv", usecols=["problem_id", "config"])
        have = set(zip(rows.problem_id, rows.config))
        offered, missing = 0, {}
        for p in load_problems(plan, None):
            for c in registry.candidates(trim_dead_taps(p.geom), KNOWN["h100"]):
                if c.family != "grouped_flat":
                    continue
                offered += 1
                if (p.id, str(c.config)) not in have:
                    missing[kind(c.config)] = missing.get(kind(c.config), 0) + 1
        meta = json.loads((SWEEPS / f"{plan}.meta.json").read_text())
        done = [r["summary"] for r in meta["runs"] if r.get("summary")]
        minutes = sum(s.get("wall_min") or 0 for s in done)
        pace = sum(s.get("rows_written") or 0 for s in done) / minutes
        parts = ", ".join(f"{v} {k}" for k, v in sorted(missing.items()))
        lines.append(f"{plan}: {offered} grouped_flat candidates, {sum(missing.values())} "
                     f"without a row ({parts}); the plan's past sweep runs wrote {pace:.0f} "
                     f"rows a minute (all families) over {minutes:.0f} minutes of sweeping")
    (HERE / "missing_rows.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
