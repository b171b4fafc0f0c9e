"""The registry of kernel families: the one place that lists what can be launched."""

from __future__ import annotations

from ..kernels.base import DIRECTIONS, Candidate, Config, KernelFamily
from ..kernels.dead_taps import trim_dead_taps
from ..kernels.device import DeviceSpec
from ..kernels.families import FAMILIES
from ..kernels.geometry import ConvGeometry

_BY_NAME: dict[str, KernelFamily] = {f.name: f for f in FAMILIES}


def families(direction: str | None = "forward") -> list[KernelFamily]:
    """Families computing ``direction`` (every family with None)."""
    if direction is not None and direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    return [f for f in FAMILIES if direction is None or f.direction == direction]


def family(name: str) -> KernelFamily:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown kernel family {name!r}; known: {sorted(_BY_NAME)}") from None


def schedule(geom: ConvGeometry, cand: Candidate | None) -> str | None:
    """What a launch of ``cand`` on ``geom`` runs that its knobs do not name
    (``KernelFamily.schedule``), on the geometry the launch runs (a forward one without its
    taps that read only padding, as in ``candidates``); None for no candidate or one of no
    registered family."""
    fam = None if cand is None else _BY_NAME.get(cand.family)
    if fam is None:
        return None
    return fam.schedule(trim_dead_taps(geom) if fam.direction == "forward" else geom,
                        cand.config)


def candidates(geom: ConvGeometry, device: DeviceSpec,
               direction: str = "forward") -> list[Candidate]:
    """Every feasible (family, config) of ``direction`` for a geometry on a device, in
    registry order. A forward call runs without its taps that read only padding
    (``trim_dead_taps``), so its candidates are those of that geometry."""
    if direction == "forward":
        geom = trim_dead_taps(geom)
    out: list[Candidate] = []
    for fam in families(direction):
        out.extend(fam.candidates(geom, device))
    return out


def known(name: str) -> bool:
    return name in _BY_NAME


def direction_of(cand: Candidate) -> str:
    return family(cand.family).direction


def check_candidate(geom: ConvGeometry, cand: Candidate, device: DeviceSpec,
                    direction: str | None = None) -> None:
    """Raise ValueError naming the reason when a forced candidate cannot run (or computes
    another direction than ``direction``)."""
    fam = family(cand.family)
    if direction is not None and fam.direction != direction:
        raise ValueError(f"{cand.family!r} computes {fam.direction}, not {direction}")
    if cand.config not in fam.configs:
        raise ValueError(f"config {cand.config} is not in the space of family {fam.name!r}")
    if fam.direction == "forward":
        geom = trim_dead_taps(geom)
    why = fam.runnable(geom, cand.config, device)
    if why is not None:
        raise ValueError(f"{cand.id} cannot run {geom.describe()}: {why}")


def parse_candidate(text: str) -> Candidate:
    cand = Candidate.parse(text)
    family(cand.family)
    return cand


__all__ = ["Candidate", "Config", "candidates", "check_candidate", "direction_of", "families",
           "family", "parse_candidate"]
