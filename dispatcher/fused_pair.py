"""Backward passes that compute dX and dW in one kernel (``backward_grouped_flat``).

A backward pass that needs both gradients, of a geometry the fused kernel takes, runs the
"backward" direction's choice (``api.decide``): one of the fused kernel's configs, or
``backward_pair``, the two directions' own choices (``autograd.pair_gradients``). With the
model trained on the backward sweep's rows (both kinds timed on each problem) that is
whether the pass fuses and how; without one, the rule chooser's ``rule_fuses``: the fused
kernel where wgrad picks the flat-grid kernel it extends (``wgrad_grouped_flat``: the
same items and copies, dX computed from the same copy of dY) and its rule's config has
programs for every SM. Nothing is timed at call time.
"""

from __future__ import annotations

import torch

from ..kernels import backward_grouped_flat as fused
from ..kernels.base import Candidate, Config
from ..kernels.device import DeviceSpec, interpreter_enabled
from ..kernels.geometry import ConvGeometry
from ..kernels.launcher import Plan
from .decision import Decision
from .launch import alignment, as5d, empty_grad, recorded
from .settings import forced

# The wgrad family whose choice the fused kernel extends to dX.
WGRAD = "wgrad_grouped_flat"
# The "backward" candidate that runs the two directions' choices instead.
PAIR = "backward_pair"
# Whether passes fuse where they may (a switch for measuring what fusing brings).
FUSE = True
# Call signature -> recorded launches of the fused kernel, and (geometry, device) -> the
# pass's config or None (both cleared by ``api.clear_cache``, as the choices they follow).
PLANS: dict[tuple, Plan | None] = {}
CONFIGS: dict[tuple, Config | None] = {}


def pair_config(geom: ConvGeometry, dev: DeviceSpec) -> Config | None:
    """The fused kernel's config for a backward pass of ``geom`` needing dX and dW on
    ``dev``, or None where the pass runs the two directions' own choices. A forced
    ``backward_grouped_flat`` candidate runs on every such pass (ValueError where it
    cannot); a forced dgrad or wgrad candidate keeps the two directions apart."""
    if forced("backward") is not None:
        return _fused_config(_decision(geom, dev).candidate)
    if not FUSE or forced("dgrad") is not None or forced("wgrad") is not None:
        return None
    key = (geom, dev)
    if key not in CONFIGS:
        CONFIGS[key] = _pair_config(geom, dev)
    return CONFIGS[key]


def _decision(geom: ConvGeometry, dev: DeviceSpec) -> Decision:
    from .api import decide

    return decide(geom, dev, direction="backward")


def _pair_config(geom: ConvGeometry, dev: DeviceSpec) -> Config | None:
    if fused.supports(geom) is not None:
        return None
    return _fused_config(_decision(geom, dev).candidate)


def _fused_config(cand: Candidate) -> Config | None:
    """The fused kernel's config of a "backward" candidate, None for the pair."""
    return None if cand.family == PAIR else cand.config


def rule_fuses(geom: ConvGeometry, dev: DeviceSpec) -> bool:
    """The rule's answer (the rule chooser's, where no backward model is loaded): a pass
    fuses where wgrad picks the flat kernel and the fused kernel's rule config gives
    programs for every SM (batch-1 layers were never measured fused against the two
    kernels when the rule was made)."""
    if fused.supports(geom) is not None:
        return False
    from .api import chosen_pair

    pair = chosen_pair(geom, dev)
    if pair is None or pair[1].family != WGRAD:  # a direction without a kernel, or another
        return False
    return fused.pair_config(geom, dev) is not None


def describe(geom: ConvGeometry, dev: DeviceSpec) -> str | None:
    """What a backward pass needing both gradients runs instead of the two choices, for
    ``explain()``; None where it runs them."""
    cfg = pair_config(geom, dev)
    if cfg is None:
        return None
    return (f"a backward pass needing dX and dW runs both in one kernel: "
            f"backward_grouped_flat:{cfg} (the backward direction's choice: "
            f"{_decision(geom, dev).reason})")


def pass_choice(geom: ConvGeometry, dev: DeviceSpec) -> str:
    """What one backward pass needing dX and dW runs, as the benchmarks record it: "dgrad
    choice & wgrad choice", then " -> backward_grouped_flat:CONFIG" where they fuse."""
    from .api import decide

    ids = " & ".join(decide(geom, dev, direction=d).candidate.id for d in ("dgrad", "wgrad"))
    cfg = pair_config(geom, dev)
    return ids if cfg is None else f"{ids} -> backward_grouped_flat:{cfg}"


def run_candidate(geom: ConvGeometry, cand: Candidate, dy: torch.Tensor, x: torch.Tensor,
                  w: torch.Tensor, out: tuple[torch.Tensor, torch.Tensor] | None = None
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """(dX, dW) by a "backward" candidate: a fused config (into ``out`` where given), or
    the pair of the two directions' choices (``autograd.pair_gradients``, its own
    outputs)."""
    if cand.family == PAIR:
        from .autograd import pair_gradients

        return pair_gradients(geom, dy, x, w)
    return run(geom, cand.config, dy, x, w, out=out)


def run(geom: ConvGeometry, cfg: Config, dy: torch.Tensor, x: torch.Tensor,
        w: torch.Tensor, out: tuple[torch.Tensor, torch.Tensor] | None = None
        ) -> tuple[torch.Tensor, torch.Tensor]:
    """(dX, dW) of one backward pass by the fused kernel (into ``out``'s pair where given,
    ``empty_grad``'s layouts); repeat calls replay its recorded launches."""
    dx, dw = out if out is not None else empty_grad("backward", x, w)
    named = {name: as5d(t, geom.dims)
             for name, t in (("dy", dy), ("x", x), ("w", w), ("dx", dx), ("dw", dw))}
    key = (geom.key(), str(cfg), dy.shape, dy.stride(), dy.dtype, dy.device, x.shape,
           x.stride(), w.shape, w.stride(), dx.stride(), dw.stride(), interpreter_enabled(),
           alignment(dy, x, w, dx, dw))
    plan = PLANS.get(key)
    if plan is not None and plan.run(named, dy.device):
        return dx, dw

    def launch():
        fused.launch(named["dy"], named["x"], named["w"], named["dx"], named["dw"], geom, cfg)

    if key in PLANS:  # recorded, not replayable (or not on these tensors)
        launch()
    else:
        PLANS[key] = recorded(launch, named)
    return dx, dw
