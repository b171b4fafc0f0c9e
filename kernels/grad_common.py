"""What the gradient families share: the dtype rule, the accumulator type and how a
launch tiles its problem (``GradGrid``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import triton.language as tl

from .base import Config, GradCall, KernelFamily
from .geometry import GEOM_DTYPES


class GradFamily(KernelFamily):
    """A dgrad or wgrad family: float64 too (the interpreter's gradchecks), any geometry
    unless the subclass narrows it."""

    dtypes = GEOM_DTYPES

    def supports(self, geom) -> str | None:
        return None

    def grid(self, geom, cfg: Config) -> GradGrid:
        """How a launch of ``cfg`` tiles ``geom``'s gradient."""
        raise NotImplementedError(f"{self.name} does not describe its launch grid")

    def hard_ok(self, geom, cfg, device) -> str | None:
        if geom.dtype == "float64" and device.key != "interpreter":
            return "float64 gradients run on the GPU through torch (checks run interpreted)"
        return super().hard_ok(geom, cfg, device)


class DepthwiseWgradFamily(GradFamily):
    """A wgrad family for depthwise filters (one input channel a group) that unrolls or
    holds at most ``max_taps`` filter taps."""

    direction = "wgrad"
    max_taps = 0

    def supports(self, geom) -> str | None:
        if geom.g == 1 or geom.cg != 1:
            return "only depthwise filters (one input channel a group)"
        taps = geom.t * geom.r * geom.s
        if taps > self.max_taps:
            return f"{taps} filter taps: more accumulators than the {self.max_taps} it holds"
        return None


def grad_acc(call: GradCall):
    """Accumulator type: float32, or float64 for float64 operands."""
    return tl.float64 if call.geom.dtype == "float64" else tl.float32


@dataclass(frozen=True)
class GradGrid:
    """How a gradient family's launch tiles its problem (``GradFamily.grid``, used by its
    launcher, its feasibility rule, the rule chooser's estimate and the model's features):
    ``tiles_m`` x ``tiles_n`` tiles of block_m x block_n over an m x n output, times
    ``mult`` (groups, stride phases, taps; SPLIT_K not included), each reducing over
    ``red`` in ``k_steps`` steps of ``k_block``; ``fma``: CUDA-core FMA, not MMA tiles."""

    m: int
    n: int
    red: int
    block_m: int
    block_n: int
    tiles_m: int
    tiles_n: int
    mult: int
    k_steps: int
    k_block: int
    fma: bool = False

    @property
    def programs(self) -> int:
        """Programs of one split (SPLIT_K multiplies them)."""
        return self.tiles_m * self.tiles_n * self.mult


def grad_estimate_us(grid: GradGrid, split: int, sms: int) -> float:
    """Rough latency of a gradient launch from waves of padded tiles; only the order of
    the estimates of one problem matters (rule chooser, synthetic sweeps)."""
    tiles = grid.programs * split
    waves = math.ceil(tiles / max(sms, 1))
    rate = 2e5 if grid.fma else 4e6 * min(1.0, grid.block_m * grid.block_n
                                                   / (128 * 128)) ** 0.35
    us = waves * 2 * grid.block_m * grid.block_n * max(grid.red, 1) / split / rate + 2.0
    if split > 1:
        us += grid.m * grid.n * grid.mult * split * 4 / 1.5e6 + 3.0
    return us


def forward_gemm_view(g) -> tuple[int, int, int, int]:
    """The forward conv's GEMM (M, N, reduction, multiplier): pixels x output channels a
    group, reduced over C/g x taps, once per group."""
    return g.gemm_m, g.kg, g.gemm_k, g.g
