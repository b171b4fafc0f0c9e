"""A backward pass by the two directions' own kernels, as a candidate of the "backward"
direction beside the fused kernel's configs (``backward_grouped_flat``).

The fused kernel is faster than the two kernels on most 2D layers, but not everywhere: on
ResNeXt3D-50 (call 220) it was 1.30x faster than the pair on layer2.0 at batch 1 and 1.4x
slower on layer3.1 at batch 8, where the two kernels each leave most SMs idle and overlap.
So whether a pass fuses is the backward model's choice too: the sweep times this candidate
(the dgrad and wgrad choices, overlapped or in order as ``autograd.pair_gradients`` runs
them inside a CUDA graph) on every problem it times the fused configs of, and the model
ranks it with them. It has no kernel of its own: ``dispatcher/autograd.py`` runs it.
"""

from __future__ import annotations

from .backward_grouped_flat import DTYPES, supports
from .base import Config, GradCall
from .grad_common import GradFamily, GradGrid


class BackwardPairFamily(GradFamily):
    """dX and dW of one pass by the dgrad and wgrad directions' choices (no config)."""

    name = "backward_pair"
    direction = "backward"
    summary = ("dX and dW by the dgrad and wgrad directions' own choices, two kernels "
               "overlapped or in order (what a pass runs where it does not fuse)")
    dtypes = DTYPES
    configs = (Config(),)

    def supports(self, geom) -> str | None:
        """The fused kernel's geometries: elsewhere a pass has nothing else to run."""
        return supports(geom)

    def grid(self, geom, cfg: Config) -> GradGrid:
        """No launch of its own: the whole pass as one tile of dX's GEMM (pixels by input
        channels, reducing a group's output channels over the filter's taps), so that its
        features carry the problem's size."""
        return GradGrid(m=geom.n * geom.d * geom.h * geom.w, n=geom.c,
                        red=geom.kg * geom.t * geom.r * geom.s, block_m=1, block_n=1,
                        tiles_m=1, tiles_n=1, mult=1, k_steps=1, k_block=1)

    def launch(self, call: GradCall, cfg: Config) -> None:
        raise NotImplementedError("backward_pair runs two directions' kernels: "
                                  "dispatcher.autograd.pair_gradients runs it")
