"""How call 268's rows entered the sweep CSVs (run once, from the repository root, with
call 268's sweeps unpacked in CALL268/sweeps).

Call 268 measured grouped_flat's row-reuse schedule wherever it loaded at most 1 / 1.2 of
the runs a plane (the rule then). The rule kept (``kernels/grouped_flat.row_reuse``) takes
it at 16-channel tiles, stride 1, where the grid keeps its rows. So a config's new row
enters where the kept rule runs the schedule; elsewhere its retired row (the same kernel
as before) goes back. All the call's new rows are in ``new_*.csv.gz``, the retired ones
in ``retired_*.csv.gz``.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

from convdispatch.validation.sweep_csv import runs_row_reuse

SWEEPS = Path("data/sweeps/h100")


def parse(line: str, header: list[str]) -> dict:
    return dict(zip(header, next(csv.reader(io.StringIO(line)))))


def assemble(csv_path: Path, fresh: list[str], retired: Path, rule) -> None:
    lines = csv_path.read_text().splitlines(keepends=True)
    header = next(csv.reader(io.StringIO(lines[0])))
    old = retired.read_text().splitlines(keepends=True)[1:]
    keep = [ln for ln in fresh if rule(parse(ln, header))]
    back = [ln for ln in old if not rule(parse(ln, header))]
    csv_path.write_text("".join(lines + back + keep))
    print(f"{csv_path}: {len(keep)} new rows, {len(back)} retired rows back, "
          f"{len(fresh) - len(keep)} new rows left out")


def main(call: Path) -> None:
    for plan in ("train", "holdout"):
        here = (SWEEPS / f"{plan}.csv").read_text().splitlines(keepends=True)
        there = (call / "sweeps" / f"{plan}.csv").read_text().splitlines(keepends=True)
        if there[:len(here)] != here:
            raise SystemExit(f"{plan}.csv: the call's CSV does not start with this one")
        assemble(SWEEPS / f"{plan}.csv", there[len(here):],
                 SWEEPS / f"{plan}.retired.csv", runs_row_reuse)
        (SWEEPS / f"{plan}.meta.json").write_text(
            (call / "sweeps" / f"{plan}.meta.json").read_text())
    flat = (call / "sweeps" / "bwd_dgrad_flat.csv").read_text().splitlines(keepends=True)
    assemble(SWEEPS / "bwd_dgrad.csv", flat[1:], SWEEPS / "bwd_dgrad.retired.csv",
             runs_row_reuse)
    meta_path = SWEEPS / "bwd_dgrad.meta.json"
    meta = json.loads(meta_path.read_text())
    meta["runs"] += json.loads((call / "sweeps" / "bwd_dgrad_flat.meta.json").read_text())["runs"]
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
