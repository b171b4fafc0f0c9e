"""One benchmark problem: a named convolution geometry, and the size caps every problem obeys."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ...kernels.geometry import DTYPE_BYTES, DTYPES, ConvGeometry

# A sweep times every candidate of every problem, so one problem must stay cheap:
# at most this many FLOPs and this many bytes of input + weight + output tensors.
# Bytes are counted at the widest dtype so that a problem fits in every dtype.
MAX_FLOPS = 250e9
MAX_TENSOR_BYTES = 3e9

_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]+$")


def tensor_bytes(geom: ConvGeometry) -> int:
    """Bytes of input, weight and output at the widest problem dtype (float32)."""
    return geom.min_bytes // geom.elem_bytes * max(DTYPE_BYTES[d] for d in DTYPES)


def within_caps(geom: ConvGeometry) -> bool:
    """True when the problem is under both the FLOP and the tensor-size cap."""
    return geom.flops <= MAX_FLOPS and tensor_bytes(geom) <= MAX_TENSOR_BYTES


def check_name(kind: str, name: str) -> str:
    """Return ``name`` if it can be part of a problem id, else raise ValueError."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError(
            f"{kind} name {name!r} must be non-empty and use only letters, digits, '_', '.', '-'"
        )
    return name


def make_id(set_name: str, layer: str, geom: ConvGeometry) -> str:
    return f"{set_name}/{layer}/n{geom.n}/{geom.dtype}"


@dataclass(frozen=True)
class Problem:
    """A convolution to benchmark. ``count``: how often the layer occurs in its network."""

    id: str
    set: str
    layer: str
    geom: ConvGeometry
    count: int = 1

    @classmethod
    def make(cls, set_name: str, layer: str, geom: ConvGeometry, count: int = 1) -> Problem:
        check_name("set", set_name)
        check_name("layer", layer)
        if not isinstance(geom, ConvGeometry):
            raise TypeError(f"geom must be a ConvGeometry, got {type(geom).__name__}")
        return cls(make_id(set_name, layer, geom), set_name, layer, geom, int(count))

    def with_dtype(self, dtype: str) -> Problem:
        """The same problem in another dtype (its id changes with it)."""
        return Problem.make(self.set, self.layer, replace(self.geom, dtype=dtype), self.count)
