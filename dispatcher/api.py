"""conv2d / conv3d with torch.nn.functional's signature: checks, choice, launch."""

from __future__ import annotations

import torch

from ..kernels.base import Candidate
from ..kernels.dead_taps import trim_dead_taps
from ..kernels.device import DeviceSpec, interpreter_enabled, spec_of
from ..kernels.geometry import ConvGeometry
from . import args as argcheck
from . import fused_pair, registry
from .cache import DecisionCache
from .custom_ops import traced_conv
from .decision import Decision
from .fallback import fall_back, torch_conv
from .launch import alignment, empty_output, launch
from .selection import chooser_for
from .settings import forced

CACHE = DecisionCache()
# Call signature -> (recorded launches, output shape, memory format): repeat
# calls skip argument checks and the choice, and only rebind tensors.
PLANS: dict[tuple, tuple] = {}
# Gradient call signature -> the recorded launches of its dgrad or wgrad kernel, or None
# where they cannot be replayed (dispatcher/autograd.py).
GRAD_PLANS: dict[tuple, object] = {}
# Call signature of a differentiable conv -> (its gradient geometry, unbatched): repeat calls
# skip the argument checks (dispatcher/autograd.py: conv_with_grad).
GRAD_CALLS: dict[tuple, tuple] = {}


def clear_cache() -> None:
    """Forget every decision and recorded plan (after changing models or choosers)."""
    CACHE.clear()
    PLANS.clear()
    GRAD_PLANS.clear()
    GRAD_CALLS.clear()
    fused_pair.PLANS.clear()
    fused_pair.CONFIGS.clear()


def _types(value):
    return tuple(map(type, value)) if type(value) is tuple else type(value)


def _signature(dims, x, w, bias, stride, padding, dilation, groups, activation, residual):
    """Everything a recorded plan depends on; raises for unhashable or non-tensor args.

    Argument types are part of it: True == 1.0 == 1 as dict keys, and only the
    checked path may accept or reject a bool or a float.
    """
    return (dims, _types(stride), _types(padding), _types(dilation), type(groups),
            x.shape, x.stride(), x.dtype, x.device, w.shape, w.stride(), w.dtype, w.device,
            None if bias is None else (bias.shape, bias.stride(), bias.dtype, bias.device),
            None if residual is None else (residual.shape, residual.stride(), residual.dtype,
                                           residual.device),
            stride, padding, dilation, groups, activation, torch.backends.cudnn.allow_tf32,
            interpreter_enabled(), alignment(x, w, bias, residual))


def _replay(entry, x, w, bias, residual) -> torch.Tensor | None:
    """The output of a recorded plan on these tensors; None where the plan cannot take them
    (a TMA launch and an unaligned address)."""
    plan, shape, fmt, unbatched = entry
    out = torch.empty(shape, dtype=x.dtype, device=x.device, memory_format=fmt)
    if unbatched:
        x = x.unsqueeze(0)
        residual = None if residual is None else residual.unsqueeze(0)
    if not plan.run({"x": x, "w": w, "out": out, "bias": bias, "residual": residual},
                    x.device):
        return None
    return out.squeeze(0) if unbatched else out


def decide(geom: ConvGeometry, device: DeviceSpec, chooser=None,
           direction: str = "forward") -> Decision:
    """The kernel computing ``direction`` (forward, dgrad, wgrad, or backward: dX and dW of
    one pass in one kernel) of a geometry: a forced candidate, else the cached or new
    choice."""
    cand = forced(direction)
    if cand is not None:
        registry.check_candidate(geom, cand, device, direction)
        return Decision(cand, "forced by convdispatch.force()", "forced")
    chooser = chooser or chooser_for(device, direction)
    key = (geom.key(), device.key, chooser.identity, direction)

    def choose() -> Decision:
        cands = registry.candidates(geom, device, direction)
        if not cands and direction != "forward":
            raise RuntimeError(f"no kernel family supports {geom.describe()} ({direction})")
        # The forward kernel runs the geometry without its dead taps (``launch``).
        return chooser.choose(trim_dead_taps(geom) if direction == "forward" else geom, cands,
                              device)

    return CACHE.get_or_make(key, choose)


def chosen_pair(geom: ConvGeometry, device: DeviceSpec) -> tuple[Candidate, Candidate] | None:
    """The candidates chosen for dX and dW of ``geom`` on ``device``, None where a direction
    has no kernel (it goes through torch)."""
    try:
        return decide(geom, device, direction="dgrad").candidate, decide(
            geom, device, direction="wgrad").candidate
    except RuntimeError:
        return None


def unsupported_reason(p: argcheck.ParsedCall) -> str | None:
    """Why no family can take this call, or None."""
    if p.x.device.type == "meta":
        return "meta tensors hold no data; torch computes the output's shape"
    if p.geom is None:
        return f"dtype {p.x.dtype} has no kernel (float16, bfloat16, float32 do)"
    if p.x.device.type != "cuda" and not interpreter_enabled():
        return f"{p.x.device.type} tensors run on Triton only under TRITON_INTERPRET=1"
    if not any(f.rejects(trim_dead_taps(p.geom)) is None for f in registry.families()):
        return f"no kernel family supports {p.geom.describe()}"
    return None


def needs_grad(*tensors) -> bool:
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def _fast_path_ok(input, weight, bias, residual) -> bool:
    return forced() is None and not needs_grad(input, weight, bias, residual)


def _conv(dims: int, input, weight, bias, stride, padding, dilation, groups, activation,
          residual, sig: tuple | None = None) -> torch.Tensor:
    """The forward conv; ``sig`` is the call's ``_signature`` where the caller made it."""
    if torch.compiler.is_compiling():
        # dynamo sees one opaque operator (convdispatch::conv), not this Python.
        return traced_conv(dims, input, weight, bias, stride, padding, dilation, groups,
                           activation, residual)
    try:
        grad = needs_grad(input, weight, bias, residual)
    except AttributeError:
        grad = False  # not tensors: the checked path below says what is wrong
    if grad:
        from .autograd import conv_with_grad

        return conv_with_grad(dims, input, weight, bias, stride, padding, dilation, groups,
                              activation, residual)
    try:
        if not _fast_path_ok(input, weight, bias, residual):
            sig = None
        elif sig is None:
            sig = _signature(dims, input, weight, bias, stride, padding, dilation, groups,
                             activation, residual)
        if sig is not None:
            entry = PLANS.get(sig)
            if entry is not None:
                out = _replay(entry, input, weight, bias, residual)
                if out is not None:
                    return out
                sig = None  # keep the plan for the calls it fits
    except (AttributeError, TypeError):
        sig = None  # not tensors, or unhashable arguments: the checked path says what is wrong
    p = argcheck.parse(dims, input, weight, bias, stride, padding, dilation, groups, residual,
                       activation)
    fn = f"conv{dims}d"
    argcheck.check_residual_shape(p, fn)
    if p.residual is not None and p.unbatched:
        p.residual = p.residual.unsqueeze(0)
    if p.x.shape[1] == 0 or p.x.device.type == "meta":
        out = torch_conv(p, dims, activation)
        return out.squeeze(0) if p.unbatched else out
    reason = unsupported_reason(p)
    if reason is not None:
        out = fall_back(p, dims, activation, reason)
        return out.squeeze(0) if p.unbatched else out
    if p.bias is not None and not p.bias.is_contiguous():
        # Kernels read bias[k] at offset k; a strided or expanded bias is copied, never recorded.
        p.bias, sig = p.bias.contiguous(), None
    geom = p.geom
    out = empty_output(p.x, argcheck.output_shape(p), geom.layout)
    if out.numel():
        dec = decide(geom, spec_of(p.x.device))
        plan = launch(dec.candidate, p.x, p.w, p.bias, geom, out, activation=activation,
                      residual=p.residual, record=sig is not None)
        if plan is not None and dec.chooser != "forced":
            fmt = torch.contiguous_format
            if geom.layout == "channels_last":
                fmt = torch.channels_last if dims == 2 else torch.channels_last_3d
            PLANS[sig] = (plan, tuple(out.shape), fmt, p.unbatched)
    return out.squeeze(0) if p.unbatched else out


def conv2d(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
           stride=1, padding=0, dilation=1, groups: int = 1, *,
           activation: str | None = None, residual: torch.Tensor | None = None) -> torch.Tensor:
    """``torch.nn.functional.conv2d`` on convdispatch kernels.

    Extra keyword-only arguments fuse an epilogue: ``activation`` in
    {None, 'relu', 'relu6', 'gelu', 'silu'} and ``residual`` (a tensor of the
    output's shape), computing ``activation(conv + bias + residual)``.
    """
    return _conv(2, input, weight, bias, stride, padding, dilation, groups, activation, residual)


def conv3d(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
           stride=1, padding=0, dilation=1, groups: int = 1, *,
           activation: str | None = None, residual: torch.Tensor | None = None) -> torch.Tensor:
    """``torch.nn.functional.conv3d`` on convdispatch kernels (see ``conv2d``)."""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups, activation, residual)
