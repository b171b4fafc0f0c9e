"""What the device probes (``validation/gpu/probe_*.py``) share: checking and timing one
candidate without stopping at the first that fails, and writing their rows."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

MAX_REL_ERR = 1e-2  # a probe's output within this of the reference (relative, by norm) is ok


def checked_time(label: str, run: Callable[[], object], out, ref, timer,
                 timed: Callable[[], Callable[[], object]]) -> tuple[float, float] | None:
    """(median us, relative error of ``out`` against ``ref`` by norm) after ``run()``
    wrote ``out`` and ``timer`` (a ``timing.Timer``: median, p20, p80) timed the callable
    ``timed()`` makes; None, printed with ``label``, where either raised (a probe records
    what failed and goes on)."""
    try:
        run()
        err = float((out.float() - ref.to(out.device).float()).norm() / ref.float().norm())
        return timer.time(timed())[0], err
    except Exception as e:  # noqa: BLE001 - see the docstring
        print(f"{label}: {type(e).__name__}: {str(e)[:300]}", flush=True)
        return None


def write_rows(path: str | Path, rows: list[dict]) -> None:
    """The rows as one CSV (columns: the first row's keys)."""
    if not rows:
        raise ValueError(f"no rows to write to {path}: every candidate failed")
    with open(path, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
