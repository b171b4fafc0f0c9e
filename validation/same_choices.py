"""Do the shipped models pick what a committed benchmark ran? (CPU, no GPU needed)

    python -m convdispatch.validation.same_choices BENCH.csv [BENCH.csv ...] [--gpu NAME]

A retrained model (a new feature schema, say) may keep every choice of the model a
benchmark measured; then that benchmark's numbers stand for it. For each benchmark CSV
(``bench_layers`` or ``bench_backward`` output: problem_id, chosen and, for gradients,
direction), this decides every row's problem with the shipped models for the GPU and
prints a markdown table of the rows whose choice differs; like ``diff``, it exits 1 where
any row differs. A ``full`` row (one backward pass) holds ``dgrad choice & wgrad
choice`` (``fused_pair.pass_choice``: then the fused kernel where the two fuse).
"""

from __future__ import annotations

import argparse

import pandas as pd

from ..data.problems import problem_by_id
from ..dispatcher import decide
from ..dispatcher.fused_pair import pass_choice
from ..dispatcher.selection import chooser_for
from ..kernels.base import DIRECTIONS
from ..kernels.device import lookup


def choice(pid: str, direction: str, spec) -> str:
    """The candidate id the shipped chooser takes for one benchmark row."""
    geom = problem_by_id(pid).geom
    if direction == "full":
        return pass_choice(geom, spec)
    return decide(geom, spec, direction=direction).candidate.id


def differing(path: str, spec) -> tuple[int, list[tuple[str, str, str]]]:
    """(rows, [(row, recorded choice, choice now)]) of one benchmark CSV; a row is named by
    its problem id, and by its direction too where the CSV has one."""
    rows = pd.read_csv(path)
    missing = {"problem_id", "chosen"} - set(rows.columns)
    if missing:
        raise ValueError(f"{path}: not a benchmark CSV (no column {sorted(missing)})")
    dirs = rows["direction"] if "direction" in rows.columns else ["forward"] * len(rows)
    out = []
    for pid, recorded, direction in zip(rows.problem_id, rows.chosen, dirs, strict=True):
        now = choice(pid, direction, spec)
        if now != recorded:
            name = pid if "direction" not in rows.columns else f"{pid} {direction}"
            out.append((name, recorded, now))
    return len(rows), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bench", nargs="+", help="bench.csv files of committed benchmarks")
    ap.add_argument("--gpu", default="NVIDIA H100 80GB HBM3", help="device name to decide for")
    a = ap.parse_args(argv)
    spec = lookup(a.gpu)
    ids = {d: chooser_for(spec, d).identity for d in DIRECTIONS}
    print(f"Choosers for {a.gpu}: " + ", ".join(f"{d} {i}" for d, i in ids.items())
          + ". Command: `python -m convdispatch.validation.same_choices "
          + " ".join(a.bench) + "`.\n")
    print("| benchmark | rows | same choice | differing (recorded -> now) |")
    print("|---|---|---|---|")
    moved = 0
    for path in a.bench:
        n, diff = differing(path, spec)
        moved += len(diff)
        text = "; ".join(f"{p} ({r} -> {c})" for p, r, c in diff) or "-"
        print(f"| `{path}` | {n} | {n - len(diff)} | {text} |")
    return 1 if moved else 0


if __name__ == "__main__":
    raise SystemExit(main())
