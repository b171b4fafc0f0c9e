"""What the gradient families share: the dtype rule and the accumulator type."""

from __future__ import annotations

import triton.language as tl

from .base import GradCall, KernelFamily
from .geometry import GEOM_DTYPES


class GradFamily(KernelFamily):
    """A dgrad or wgrad family: float64 too (the interpreter's gradchecks), any geometry
    unless the subclass narrows it."""

    dtypes = GEOM_DTYPES

    def supports(self, geom) -> str | None:
        return None

    def hard_ok(self, geom, cfg, device) -> str | None:
        if geom.dtype == "float64" and device.key != "interpreter":
            return "float64 gradients run on the GPU through torch (checks run interpreted)"
        return super().hard_ok(geom, cfg, device)


def grad_acc(call: GradCall):
    """Accumulator type: float32, or float64 for float64 operands."""
    return tl.float64 if call.geom.dtype == "float64" else tl.float32
