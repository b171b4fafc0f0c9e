"""What the gradient families share: the dtype rule, the accumulator type and the
GEMM each one computes (``GEMM_VIEW``, read by the rule chooser and the features)."""

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


def _dgrad_taps(g) -> int:
    """Output channels x filter taps one input pixel of a stride phase reduces over."""
    return g.kg * g.t * g.r * g.s // (g.stride[0] * g.stride[1] * g.stride[2]) or 1


# Per gradient family: its GEMM as (M, N, reduction, grid multiplier) of the forward
# geometry. dgrad tiles input pixels x input channels and reduces over the output
# channels of the taps that reach a stride phase; wgrad tiles output x input channels
# per tap and reduces over the output pixels.
GEMM_VIEW = {
    "dgrad_gemm": lambda g: (g.n * g.d * g.h * g.w, g.cg, _dgrad_taps(g), g.g),
    "wgrad_gemm": lambda g: (g.kg, g.cg, g.gemm_m, g.g * g.t * g.r * g.s),
    "dgrad_packed": lambda g: (g.n * g.d * g.h * g.w, g.c, _dgrad_taps(g), 1),
    "wgrad_packed": lambda g: (g.k, g.cg, g.gemm_m, g.t * g.r * g.s),
    "dgrad_direct": lambda g: (g.n * g.d * g.h * g.w, g.c, _dgrad_taps(g), 1),
    "dgrad_depthwise": lambda g: (g.n * g.d * g.h * g.w, g.c, g.t * g.r * g.s, 1),
    "wgrad_direct": lambda g: (g.gemm_m, g.k * g.cg, 1, g.t * g.r * g.s),
}


def forward_gemm_view(g) -> tuple[int, int, int, int]:
    """The forward conv's GEMM in the same terms: pixels x output channels a group,
    reduced over C/g x taps, once per group."""
    return g.gemm_m, g.kg, g.gemm_k, g.g
