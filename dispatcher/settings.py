"""Process-wide switches: strict mode, the chooser in use, and forced candidates."""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator

from ..kernels.base import Candidate

_forced: contextvars.ContextVar[Candidate | None] = contextvars.ContextVar(
    "convdispatch_forced", default=None)
_strict: bool | None = None


def strict() -> bool:
    """Strict mode raises where the default would fall back to torch with a warning."""
    if _strict is not None:
        return _strict
    return os.environ.get("CONVDISPATCH_STRICT", "0") not in ("", "0")


def set_strict(on: bool) -> None:
    global _strict
    if not isinstance(on, bool):
        raise TypeError(f"set_strict() takes a bool, got {type(on).__name__}")
    _strict = on


@contextlib.contextmanager
def force(candidate: Candidate | str) -> Iterator[Candidate]:
    """Launch ``candidate`` for every conv in the block, bypassing the chooser and cache.

    ``candidate`` is a Candidate or its text form ``'family:KEY=V;KEY=V'``
    (as in sweep CSVs and ``explain()``). It applies to the direction its family
    computes (a ``dgrad_*`` candidate forces the gradient of the input, and so on);
    the other directions choose as usual. A candidate that cannot run a geometry
    raises ValueError at that call; nothing falls back silently.
    """
    from . import registry

    cand = registry.parse_candidate(candidate) if isinstance(candidate, str) else candidate
    if not isinstance(cand, Candidate):
        raise TypeError(f"force() takes a Candidate or its text, got {type(candidate).__name__}")
    registry.family(cand.family)
    token = _forced.set(cand)
    try:
        yield cand
    finally:
        _forced.reset(token)


def forced(direction: str = "forward") -> Candidate | None:
    """The forced candidate if it computes ``direction``."""
    from . import registry

    cand = _forced.get()
    if cand is None or registry.direction_of(cand) != direction:
        return None
    return cand
