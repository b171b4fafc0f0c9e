"""A probe worker's check for tests/test_validate.py (``probe_io.checked_in_workers``), in
a module of its own so that the spawned workers that import it start fast."""

from __future__ import annotations

import time


def check(task: tuple) -> list[tuple]:
    """Task (name, seconds to hang): one row (name, 0, relative error, message)."""
    name, hang = task
    time.sleep(hang)
    return [(name, 0, 1e-4 if name != "wrong" else 0.5, "")]
