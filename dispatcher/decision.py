"""A choice of kernel for one geometry, with the reasons and the ranking behind it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..kernels.base import Candidate


@dataclass(frozen=True)
class Decision:
    """What a chooser picked: the candidate, why, and every feasible candidate ranked."""

    candidate: Candidate
    reason: str
    chooser: str
    ranked: tuple[tuple[Candidate, float], ...] = field(default=())
    model: str | None = None  # identity (hash) of the model that ranked, if any
    score_unit: str = "estimated us"
