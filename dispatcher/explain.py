"""explain(): what would run for a call or a bare geometry, and why."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..kernels.base import DIRECTIONS, Candidate
from ..kernels.dead_taps import trim_dead_taps
from ..kernels.device import DeviceSpec, interpreter_enabled, lookup, spec_of
from ..kernels.geometry import ConvGeometry
from . import args as argcheck
from . import fused_pair, registry
from .api import decide, unsupported_reason
from .selection import RULE


@dataclass
class Explanation:
    """The chosen kernel, the reason and the ranked feasible candidates (best first)."""

    geometry: ConvGeometry | None
    device: DeviceSpec
    chooser: str
    candidate: Candidate | None
    reason: str
    ranked: list[tuple[Candidate, float]] = field(default_factory=list)
    model: str | None = None
    score_unit: str = ""
    fallback: str | None = None
    # For dgrad and wgrad: what a backward pass needing both runs instead (``fused_pair``);
    # for backward: that, or that a pass of this geometry does not run the fused kernel.
    pair: str | None = None
    # Forward: the filter window the kernel runs where taps that read only padding are
    # dropped (``kernels/dead_taps.py``), else None.
    live_taps: str | None = None
    # What the chosen candidate's launch runs that its knobs do not name
    # (``KernelFamily.schedule``), else None.
    schedule: str | None = None

    def to_dict(self) -> dict:
        return {
            "geometry": self.geometry.describe() if self.geometry else None,
            "device": self.device.name, "chooser": self.chooser, "model": self.model,
            "candidate": self.candidate.id if self.candidate else None,
            "reason": self.reason, "fallback": self.fallback, "score_unit": self.score_unit,
            "ranked": [(c.id, s) for c, s in self.ranked], "pair": self.pair,
            "live_taps": self.live_taps, "schedule": self.schedule,
        }

    def __str__(self) -> str:
        lines = [f"geometry : {self.geometry.describe() if self.geometry else '-'}",
                 f"device   : {self.device.name}",
                 f"chooser  : {self.chooser}" + (f" (model {self.model})" if self.model else "")]
        if self.fallback:
            lines.append(f"fallback : torch.nn.functional ({self.fallback})")
            return "\n".join(lines)
        lines.append(f"chosen   : {self.candidate.id}")
        if self.schedule:
            lines.append(f"schedule : {self.schedule}")
        lines += [f"reason   : {self.reason}",
                  f"ranked   : {len(self.ranked)} feasible candidates ({self.score_unit})"]
        if self.pair:
            lines.insert(-1, f"pair     : {self.pair}")
        if self.live_taps:
            lines.insert(1, f"taps     : {self.live_taps}")
        for i, (c, s) in enumerate(self.ranked[:10]):
            lines.append(f"  {i + 1:>3}. {s:12.4g}  {c.id}")
        return "\n".join(lines)


def _device(gpu: str | None, x) -> DeviceSpec:
    if gpu is not None:
        if not isinstance(gpu, str):
            raise TypeError(f"gpu must be a GPU name such as 'h100', got {type(gpu).__name__}")
        return lookup(gpu)
    if isinstance(x, torch.Tensor) and x.device.type == "cuda":
        return spec_of(x.device)
    if interpreter_enabled():
        return spec_of("cpu")
    if isinstance(x, torch.Tensor) and x.device.type != "cuda":
        return spec_of("cpu")
    raise ValueError("explain() of a bare geometry needs gpu='h100' (or another known GPU)")


def explain(input: torch.Tensor | ConvGeometry, weight: torch.Tensor | None = None,
            bias: torch.Tensor | None = None, stride=1, padding=0, dilation=1, groups: int = 1,
            *, gpu: str | None = None, chooser: str | None = None,
            direction: str = "forward") -> Explanation:
    """Explain the choice for ``conv2d/conv3d(input, weight, ...)`` or for a ConvGeometry.

    ``gpu`` names a target GPU ('h100') so a choice can be inspected on a
    machine without it; ``chooser`` forces 'rule' or the default ('model');
    ``direction`` is 'forward', 'dgrad' (gradient of the input), 'wgrad' (of the weight) or
    'backward' (both in one kernel, where a pass fuses them).
    """
    if chooser not in (None, "model", "rule"):
        raise ValueError(f"chooser must be 'rule', 'model' or None, got {chooser!r}")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    device = _device(gpu, input)
    fallback = None
    if isinstance(input, ConvGeometry):
        geom = input
    elif isinstance(input, torch.Tensor):
        if not isinstance(weight, torch.Tensor):
            raise TypeError("explain(input, weight, ...) needs a weight tensor")
        if weight.dim() not in (4, 5):
            raise RuntimeError(f"weight must be 4D or 5D, got size {list(weight.shape)}")
        p = argcheck.parse(weight.dim() - 2, input, weight, bias, stride, padding, dilation,
                           groups, None, None)
        geom = p.geom
        fallback = unsupported_reason(p) if gpu is None else (
            None if p.geom is not None else unsupported_reason(p))
    else:
        raise TypeError(f"explain() takes a tensor or a ConvGeometry, got {type(input).__name__}")
    if fallback is not None or geom is None:
        return Explanation(geom, device, "fallback", None, fallback or "", fallback=fallback)
    dec = decide(geom, device, RULE if chooser == "rule" else None, direction)
    pair = None
    if direction != "forward" and chooser != "rule":
        pair = fused_pair.describe(geom, device)
        if pair is None and direction == "backward":
            pair = ("a backward pass of this geometry runs the dgrad and wgrad choices "
                    "(backward_pair, or no fused kernel for it: dispatcher/fused_pair.py)")
    return Explanation(geom, device, dec.chooser, dec.candidate, dec.reason, list(dec.ranked),
                       dec.model, dec.score_unit, pair=pair,
                       live_taps=live_taps_note(geom) if direction == "forward" else None,
                       schedule=registry.schedule(geom, dec.candidate))


def live_taps_note(geom: ConvGeometry) -> str | None:
    """What the forward kernel runs where some taps read only padding, else None."""
    live = trim_dead_taps(geom)
    if live == geom:
        return None
    lead = 3 - geom.dims

    def window(g: ConvGeometry) -> str:
        return "x".join(map(str, (g.t, g.r, g.s)[lead:]))

    return (f"a {window(geom)} filter runs as {window(live)}: its other taps read only "
            f"padding (padding {live.pad[lead:]} low, {live.pads_hi[lead:]} high)")
