"""A probe worker's check for tests/test_validate.py (``probe_io.checked_in_workers``), in
a module of its own so that the spawned workers that import it start fast."""

from __future__ import annotations

import time


def check(task: tuple) -> list[tuple]:
    """Task (name, seconds to hang): one row (name, 0, relative error, message); the tasks
    named "raise" and "stop" raise (StopIteration as a task that looks up a config it does
    not find with ``next``)."""
    name, hang = task
    time.sleep(hang)
    if name == "raise":
        raise ValueError("no such config")
    if name == "stop":
        raise StopIteration
    return [(name, 0, 1e-4 if name != "wrong" else 0.5, "")]
