"""Launching one candidate on checked tensors: the only path from a choice to a kernel."""

from __future__ import annotations

import torch

from ..kernels.base import ACTIVATIONS, Candidate, ConvCall, GradCall
from ..kernels.dead_taps import live_filter, trim_dead_taps
from ..kernels.geometry import ConvGeometry
from ..kernels.launcher import Plan, Recorder
from . import registry


def as5d(t: torch.Tensor | None, dims: int) -> torch.Tensor | None:
    if t is None or dims == 3:
        return t
    return t.unsqueeze(2)


def alignment(*tensors: torch.Tensor | None) -> tuple[bool | None, ...]:
    """Whether each tensor starts on 16 bytes (None for None): part of every recorded
    plan's key, as the recorded kernels were compiled for it (Triton specialises pointers
    on it) and the Gluon families copy an unaligned tensor before their launch."""
    return tuple(None if t is None else t.data_ptr() % 16 == 0 for t in tensors)


def empty_output(x: torch.Tensor, shape: list[int], layout: str) -> torch.Tensor:
    """Output in the input's memory format."""
    fmt = torch.contiguous_format
    if layout == "channels_last":
        fmt = torch.channels_last if len(shape) == 4 else torch.channels_last_3d
    return torch.empty(shape, device=x.device, dtype=x.dtype, memory_format=fmt)


def launch(cand: Candidate, x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None,
           geom: ConvGeometry, out: torch.Tensor, *, activation: str | None = None,
           residual: torch.Tensor | None = None, record: bool = False) -> Plan | None:
    """Run ``cand`` writing ``out`` (batched tensors of the geometry's rank).

    The kernel computes ``geom`` without the taps that read only padding
    (``trim_dead_taps``), reading the view of ``w`` that holds the others. With ``record``
    the launches are also returned as a Plan (see ``_run``) that later calls of the same
    signature replay with their own tensors (the filter's view is rebound to their ``w``).
    """
    if out.numel() == 0:
        return None
    w5 = as5d(w, geom.dims)
    live = trim_dead_taps(geom)
    call = ConvCall(
        x=as5d(x, geom.dims), w=live_filter(w5, geom), out=as5d(out, geom.dims), bias=bias,
        residual=as5d(residual, geom.dims), geom=live, activation=ACTIVATIONS[activation],
        allow_tf32=torch.backends.cudnn.allow_tf32,
    )
    return _run(cand, call, record, {"x": call.x, "w": w5, "out": call.out,
                                     "bias": call.bias, "residual": call.residual})


def _run(cand: Candidate, call: ConvCall | GradCall, record: bool,
         tensors: dict[str, torch.Tensor | None]) -> Plan | None:
    """Launch ``cand`` on ``call``; with ``record``, also return its launches as a Plan
    that rebinds ``tensors``, or None where a launch took a tensor the launcher made itself
    (``dgrad_depthwise``'s flipped filter): such calls cannot be replayed."""
    family = registry.family(cand.family)
    if not record:
        family.launch(call, cand.config)
        return None
    return recorded(lambda: family.launch(call, cand.config), tensors)


def recorded(launch_fn, tensors: dict[str, torch.Tensor | None]) -> Plan | None:
    """Run ``launch_fn`` and return its launches as a Plan that rebinds ``tensors``, or
    None where a launch took a tensor the launcher made itself: not replayable."""
    with Recorder() as rec:
        launch_fn()
    try:
        return Plan(rec, tensors)
    except RuntimeError:
        return None


def run_candidate(cand: Candidate, x: torch.Tensor, weight: torch.Tensor,
                  bias: torch.Tensor | None, geom: ConvGeometry, *,
                  activation: str | None = None, residual: torch.Tensor | None = None,
                  out: torch.Tensor | None = None) -> torch.Tensor:
    """Run a forced candidate on batched tensors that match ``geom`` (the sweep's path)."""
    from ..kernels.device import spec_of

    registry.check_candidate(geom, cand, spec_of(x.device), "forward")
    if out is None:
        shape = [geom.n, geom.k, *geom.out_spatial[3 - geom.dims:]]
        out = empty_output(x, shape, geom.layout)
    launch(cand, x, weight, bias, geom, out, activation=activation, residual=residual)
    return out


def empty_grad(direction: str, x: torch.Tensor, w: torch.Tensor):
    """An uninitialised dX (dgrad) or dW (wgrad) with X's or W's strides; (dX, dW) for a
    whole backward pass ("backward")."""
    if direction == "backward":
        return empty_grad("dgrad", x, w), empty_grad("wgrad", x, w)
    return torch.empty_like(x if direction == "dgrad" else w, memory_format=torch.preserve_format)


def launch_grad(cand: Candidate, geom: ConvGeometry, dy: torch.Tensor, *,
                x: torch.Tensor | None, w: torch.Tensor | None, out: torch.Tensor,
                record: bool = False) -> Plan | None:
    """Run a dgrad (reads dy, w) or wgrad (reads dy, x) candidate writing ``out`` (batched
    tensors of the geometry's rank); with ``record``, also return its launches as a Plan
    (see ``_run``) that rebinds dy, x, w and out."""
    if out.numel() == 0:
        return None
    call = GradCall(dy=as5d(dy, geom.dims), x=as5d(x, geom.dims), w=as5d(w, geom.dims),
                    out=as5d(out, geom.dims), geom=geom,
                    allow_tf32=torch.backends.cudnn.allow_tf32)
    return _run(cand, call, record, {"dy": call.dy, "x": call.x, "w": call.w, "out": call.out})


def run_grad_candidate(cand: Candidate, direction: str, dy: torch.Tensor, x: torch.Tensor,
                       w: torch.Tensor, geom: ConvGeometry, *,
                       out: torch.Tensor | None = None) -> torch.Tensor:
    """Run a forced dgrad/wgrad candidate on batched tensors of ``geom`` (the sweep's path):
    returns dX or dW; a backward candidate returns (dX, dW) (``out``: the pair)."""
    from ..kernels.device import spec_of

    if direction == "backward" and out is not None and not (
            isinstance(out, tuple) and len(out) == 2):
        raise TypeError(f"a backward candidate writes (dX, dW): out must be a pair of "
                        f"tensors, got {type(out).__name__}")
    registry.check_candidate(geom, cand, spec_of(dy.device), direction)
    if direction == "backward":
        from . import fused_pair

        return fused_pair.run_candidate(geom, cand, dy, x, w, out=out)
    if out is None:
        out = empty_grad(direction, x, w)
    launch_grad(cand, geom, dy, x=x, w=w, out=out)
    return out
