"""The trained model as a chooser: ranks every feasible candidate by predicted latency."""

from __future__ import annotations

import math
from pathlib import Path

from ..kernels.base import Candidate
from ..kernels.device import DeviceSpec
from ..kernels.geometry import ConvGeometry
from .decision import Decision


class ModelChooser:
    name = "model"

    def __init__(self, model) -> None:
        self.model = model
        self.identity = f"model-{model.identity}"

    @classmethod
    def load(cls, path: str | Path, direction: str | None = None) -> ModelChooser:
        """The model at ``path``; with ``direction``, refuse one trained for another."""
        from ..heuristics.model_store import ModelLoadError, load_model

        model = load_model(path)
        if direction is not None and model.direction != direction:
            raise ModelLoadError(f"{path}: a {model.direction} model, not a {direction} one")
        return cls(model)

    def choose(self, geom: ConvGeometry, cands: list[Candidate], device: DeviceSpec) -> Decision:
        if not cands:
            raise RuntimeError(f"no kernel family supports {geom.describe()}")
        ranked, vetoed = self.model.rank_with_vetoes(geom, cands, device)
        best, score = ranked[0]
        if score == float("inf"):
            # No candidate is of a family and config (keys, values) the model was trained on.
            from .choosers import RuleChooser

            decision = RuleChooser().choose(geom, cands, device)
            return Decision(decision.candidate, f"model {self.model.identity} has seen none "
                            f"of these candidates' families and config keys and values; "
                            f"{decision.reason}", "rule", decision.ranked)
        gpu = getattr(self.model, "gpu", "?")
        reason = (f"model {self.model.identity} (trained on {gpu}) ranks it first of "
                  f"{len(ranked)} feasible candidates")
        if vetoed:
            names = ", ".join(c.id for c in vetoed)
            reason += (f"; its guard moved {len(vetoed)} of the ranker's top "
                       f"{self.model.guard_params.top_k} back as predicted over "
                       f"{math.exp(self.model.guard_params.max_log_slowdown):.2g}x slower: "
                       f"{names}")
        return Decision(best, reason, self.name, tuple(ranked), model=self.model.identity,
                        score_unit=getattr(self.model, "score_unit", "model score"))


def locate(device: DeviceSpec) -> tuple[Path | None, str]:
    """Model directory for a device and a note (why none, or which nearest one)."""
    try:
        from ..heuristics.model_store import find_model
    except ImportError as e:  # pragma: no cover - heuristics is part of the package
        return None, f"heuristics unavailable: {e}"
    found = find_model(device)
    if found is None:
        return None, "no model directory matches this GPU"
    if isinstance(found, tuple):
        path, note = found
        return (Path(path) if path else None), (note or "")
    return Path(found), ""
