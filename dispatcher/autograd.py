"""Autograd for conv2d/conv3d: forward on the dispatcher, gradients on dgrad/wgrad kernels.

``conv2d``/``conv3d`` come here when a gradient is needed. The forward pass is
the dispatcher's usual one; the backward pass applies the fused epilogue's own
gradient (activation, residual, bias) with torch's elementwise formulas, then
launches the kernel each gradient direction's chooser picks: ``dgrad`` for the
input, ``wgrad`` for the weight. Choices are cached per geometry like forward
ones; nothing is timed. Activations whose derivative needs the pre-activation
value (gelu, silu) keep it from the forward pass: the conv runs with bias and
residual fused and the activation is applied by torch.
"""

from __future__ import annotations

import threading
import warnings

import torch
import torch.nn.functional as F

from ..kernels.device import interpreter_enabled, spec_of
from ..kernels.geometry import ConvGeometry
from ..kernels.launcher import concurrently
from . import args as argcheck
from . import fused_pair, registry
from .fallback import ACTIVATION_FNS, FallbackWarning, explicit_pads, fall_back, torch_conv
from .launch import alignment, empty_grad, launch_grad
from .settings import forced

_warned: set[str] = set()
_lock = threading.Lock()


def _grad_unsupported(p: argcheck.ParsedCall, geom: ConvGeometry | None) -> str | None:
    if geom is None:
        return f"dtype {p.x.dtype} has no gradient kernel (float16, bfloat16, float32 do)"
    if p.x.device.type != "cuda" and not interpreter_enabled():
        return f"{p.x.device.type} tensors run on Triton only under TRITON_INTERPRET=1"
    return None


def conv_with_grad(dims: int, input, weight, bias, stride, padding, dilation, groups,
                   activation, residual) -> torch.Tensor:
    """A differentiable conv: ``_ConvFn`` where kernels can run, else torch's. A call whose
    signature was checked before skips the checks (``api.GRAD_CALLS``)."""
    from .api import GRAD_CALLS, _signature

    try:
        sig = _signature(dims, input, weight, bias, stride, padding, dilation, groups,
                         activation, residual)
        known = GRAD_CALLS.get(sig)
    except (AttributeError, TypeError):
        sig = known = None  # not tensors, or unhashable arguments: the checks say what
    if known is not None:
        return _ConvFn.apply(input, weight, bias, residual, dims, stride, padding, dilation,
                             groups, activation, *known, sig)
    p = argcheck.parse(dims, input, weight, bias, stride, padding, dilation, groups, residual,
                       activation)
    argcheck.check_residual_shape(p, f"conv{dims}d")
    if p.residual is not None and p.unbatched:
        p.residual = p.residual.unsqueeze(0)
    if p.x.device.type == "meta" or 0 in (p.x.shape[0], p.x.shape[1]):
        out = torch_conv(p, dims, activation)  # nothing to compute: torch's shapes and grads
        return out.squeeze(0) if p.unbatched else out
    geom = argcheck.grad_geometry(p, dims)
    reason = _grad_unsupported(p, geom)
    if reason is not None:
        out = fall_back(p, dims, activation, reason)
        return out.squeeze(0) if p.unbatched else out
    if sig is not None:
        GRAD_CALLS[sig] = (geom, p.unbatched)
    return _ConvFn.apply(input, weight, bias, residual, dims, stride, padding, dilation, groups,
                         activation, geom, p.unbatched, sig)


class _ConvFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, bias, residual, dims, stride, padding, dilation, groups, activation,
                geom, unbatched, sig):
        from .api import _conv

        if activation in ("gelu", "silu"):
            z = _conv(dims, x, w, bias, stride, padding, dilation, groups, None, residual)
            y = ACTIVATION_FNS[activation](z)
            saved = z
        else:
            # The forward plan's key is this call's signature, already made (None: make it).
            y = _conv(dims, x, w, bias, stride, padding, dilation, groups, activation, residual,
                      sig)
            saved = y if activation in ("relu", "relu6") else None
        ctx.save_for_backward(x, w, saved)
        ctx.geom, ctx.activation, ctx.unbatched, ctx.dims = geom, activation, unbatched, dims
        ctx.residual_shape = None if residual is None else residual.shape
        return y

    @staticmethod
    def backward(ctx, gy):
        x, w, saved = ctx.saved_tensors
        need_x, need_w, need_b, need_r = ctx.needs_input_grad[:4]
        dz = epilogue_grad(gy, saved, ctx.activation)
        dx = dw = db = dr = None
        if need_r:
            dr = dz.reshape(ctx.residual_shape)
        dz5 = dz.unsqueeze(0) if ctx.unbatched else dz
        if need_b:
            acc = torch.float64 if dz5.dtype == torch.float64 else torch.float32
            reduce = [0, *range(2, dz5.dim())]
            db = dz5.sum(dim=reduce, dtype=acc).to(dz5.dtype)
        xb = x.unsqueeze(0) if ctx.unbatched else x
        dx, dw = gradients(ctx.geom, dz5, xb, w, need_x, need_w)
        if dx is not None and ctx.unbatched:
            dx = dx.squeeze(0)
        return dx, dw, db, dr, None, None, None, None, None, None, None, None, None


# When ``gradients`` runs dX and dW at once on two streams: "graphs" (while a CUDA graph is
# being captured), "always" or "never"; the values are the same either way. In eager mode
# the fork and join cost host time (about 2.5 ms a step of train_check's network on the
# H100 machine, where the step is host-bound) and the layers big enough to keep the GPU
# busy gain nothing from it (validation/results/grad_overlap_h100/).
OVERLAP = "graphs"


# Whether overlapped gradients launch dW's kernels before dX's: None lets the chosen wgrad
# family decide (``overlap_first``); True or False force an order (a switch for measuring
# what the order brings).
WGRAD_FIRST: bool | None = None


def _overlap(device: torch.device) -> bool:
    if OVERLAP == "graphs":
        return device.type == "cuda" and torch.cuda.is_current_stream_capturing()
    if OVERLAP not in ("always", "never"):
        raise ValueError(f"autograd.OVERLAP must be 'graphs', 'always' or 'never', got "
                         f"{OVERLAP!r}")
    return OVERLAP == "always"


def _pair_families(geom: ConvGeometry, dev) -> list | None:
    """The families chosen for dX and dW on ``dev`` (a DeviceSpec), None where a direction
    has no kernel (it goes through torch)."""
    from .api import chosen_pair

    pair = chosen_pair(geom, dev)
    return None if pair is None else [registry.family(c.family) for c in pair]


# Forward FLOPs of a layer below which two kernels that each fill the GPU alone still run
# at once: their ramp and tail dominate (call 212: 1.17-1.41x faster overlapped on
# ResNeXt3D-50 layer1.0 and layer2.1 at batch 1, layer2.1 at batch 8, 0.09-0.69 GFLOP);
# above, they slowed each other (1.10x on ResNeXt3D-50 layer1.0 at batch 8, 1.39 GFLOP;
# 1.59x on ResNeXt-50 layer2.1 at batch 32, 0.92 GFLOP, call 170).
IN_ORDER_FLOPS = 8e8


def pair_overlaps(geom: ConvGeometry, dev) -> bool:
    """Whether the kernels chosen for dX and dW on ``dev`` (a DeviceSpec) may run at once:
    not where both fill the GPU alone, unless the layer is small (``IN_ORDER_FLOPS``). (A
    direction without a kernel goes through torch, beside the other.)"""
    fams = _pair_families(geom, dev)
    return (fams is None or not all(f.fills_gpu for f in fams)
            or geom.flops < IN_ORDER_FLOPS)


def wgrad_first(geom: ConvGeometry, dev) -> bool:
    """Whether overlapped gradients launch dW's kernels before dX's: where the chosen wgrad
    family asks for it on ``geom`` (``launched_first``), unless ``WGRAD_FIRST`` forces an
    order."""
    if WGRAD_FIRST is not None:
        return WGRAD_FIRST
    fams = _pair_families(geom, dev)
    return fams is not None and fams[1].launched_first(geom)


def gradients(geom: ConvGeometry, dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor,
              need_x: bool = True, need_w: bool = True
              ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """(dX, dW) of one backward pass, None where not needed. Inside a CUDA graph capture
    (``OVERLAP``) the two run at once on side streams joined back into the current one
    (``launcher.concurrently``): they read the same tensors and write different ones, and
    a small layer's dgrad or wgrad alone leaves most SMs idle. Each is the kernel its own
    chooser picks. A pair of kernels that each fill the GPU alone (``fills_gpu``) runs
    in order even then: at once they were slower (ResNeXt-50 layer2.1 at batch 32: 75.8
    against 47.6 us, call 170). Overlapped, dW's kernels go first where ``wgrad_first``
    says so. Where ``fused_pair`` gives a config, one kernel computes both."""
    if need_x and need_w:
        cfg = fused_pair.pair_config(geom, spec_of(dy.device))
        if cfg is not None:
            return fused_pair.run(geom, cfg, dy, x, w)
    return pair_gradients(geom, dy, x, w, need_x, need_w)


def pair_gradients(geom: ConvGeometry, dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor,
                   need_x: bool = True, need_w: bool = True
                   ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """``gradients`` by the two directions' own kernels (never the fused one): overlapped
    or in order as ``gradients`` says. The "backward" direction's ``backward_pair``
    candidate."""
    dev = spec_of(dy.device)
    if not (need_x and need_w and _overlap(dy.device) and pair_overlaps(geom, dev)):
        return (gradient(geom, "dgrad", dy, x, w) if need_x else None,
                gradient(geom, "wgrad", dy, x, w) if need_w else None)
    # Made on the current stream, so the caching allocator frees them after its later use.
    dx, dw = empty_grad("dgrad", x, w), empty_grad("wgrad", x, w)
    launches = [(0, "dgrad", dx), (1, "wgrad", dw)]
    if wgrad_first(geom, dev):
        launches.reverse()
    with concurrently(dy.device, 2) as streams:
        for i, direction, out in launches:
            with streams[i]:
                gradient(geom, direction, dy, x, w, out=out)
    return dx, dw


def epilogue_grad(gy: torch.Tensor, saved: torch.Tensor | None,
                  activation: str | None) -> torch.Tensor:
    """d(loss)/d(conv + bias + residual) from d(loss)/d(output), as torch's formulas give."""
    if activation == "relu":
        return torch.where(saved > 0, gy, torch.zeros_like(gy))
    if activation == "relu6":
        return torch.where((saved > 0) & (saved < 6), gy, torch.zeros_like(gy))
    if activation == "gelu":
        return torch.ops.aten.gelu_backward(gy, saved)
    if activation == "silu":
        return torch.ops.aten.silu_backward(gy, saved)
    return gy


def call_gradient(dims: int, direction: str, dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor,
                  stride, padding, dilation, groups: int) -> torch.Tensor:
    """dX or dW of ``conv{dims}d(x, w, None, stride, padding, dilation, groups)`` for the
    output gradient ``dy`` (unbatched inputs included): the kernels where they run, else
    torch's with one warning per reason. What ``convdispatch::conv_grad`` computes."""
    if direction not in ("dgrad", "wgrad"):
        raise ValueError(f"direction must be 'dgrad' or 'wgrad', got {direction!r}")
    p = argcheck.parse(dims, x, w, None, stride, padding, dilation, groups, None, None)
    dyb = dy.unsqueeze(0) if p.unbatched else dy
    geom = argcheck.grad_geometry(p, dims)
    reason = _grad_unsupported(p, geom)
    if geom is None or p.x.device.type == "meta" or 0 in (p.x.shape[0], p.x.shape[1]):
        out = _autograd_grad(dims, direction, dyb, p)
    elif reason is not None:
        out = _torch_fallback(geom, direction, dyb, p.x, w, reason)
    else:
        out = gradient(geom, direction, dyb, p.x, w)
    return out.squeeze(0) if p.unbatched and direction == "dgrad" else out


def _autograd_grad(dims: int, direction: str, dy: torch.Tensor,
                   p: argcheck.ParsedCall) -> torch.Tensor:
    """torch's gradient where no geometry exists (other dtypes, empty tensors)."""
    fn = F.conv2d if dims == 2 else F.conv3d
    x = p.x.detach().requires_grad_(direction == "dgrad")
    w = p.w.detach().requires_grad_(direction == "wgrad")
    with torch.enable_grad():
        y = fn(F.pad(x, explicit_pads(p.padding, p.padding_hi)), w, None, p.stride, 0,
               p.dilation, p.groups)
        (g,) = torch.autograd.grad(y, x if direction == "dgrad" else w, dy,
                                   allow_unused=True)
    if g is None:
        g = torch.zeros_like(x if direction == "dgrad" else w)
    return g


def gradient(geom: ConvGeometry, direction: str, dy: torch.Tensor, x: torch.Tensor,
             w: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """dX ('dgrad', in X's memory format) or dW ('wgrad', in W's) of a batched conv, by the
    kernel the direction's chooser picks; written into ``out`` (``empty_grad``'s layout)
    where given."""
    from .api import GRAD_PLANS, decide

    key = None
    if forced(direction) is None:
        key = (direction, geom.key(), dy.shape, dy.stride(), dy.dtype, dy.device, x.shape,
               x.stride(), w.shape, w.stride(), torch.backends.cudnn.allow_tf32,
               interpreter_enabled(), alignment(dy, x, w))
        plan = GRAD_PLANS.get(key)
        if plan is not None:  # a repeat call: only rebind the tensors
            if out is None:
                out = empty_grad(direction, x, w)
            if plan.run({"dy": dy, "x": x, "w": w, "out": out}, dy.device):
                return out
            # else a TMA launch and an unaligned address: the checked path below
    try:
        dec = decide(geom, spec_of(dy.device), direction=direction)
    except RuntimeError as e:  # no family offers a candidate
        res = _torch_fallback(geom, direction, dy, x, w, str(e))
        return res if out is None else out.copy_(res)
    if out is None:
        out = empty_grad(direction, x, w)
    record = key is not None and key not in GRAD_PLANS
    plan = launch_grad(dec.candidate, geom, dy, x=x, w=w, out=out, record=record)
    if record:
        GRAD_PLANS[key] = plan
    return out


def _torch_fallback(geom: ConvGeometry, direction: str, dy, x, w, why: str) -> torch.Tensor:
    """``torch_grad`` where no family offers a candidate, with one warning per reason."""
    with _lock:
        first = why not in _warned
        _warned.add(why)
    if first:
        warnings.warn(f"convdispatch: {direction} through torch: {why}", FallbackWarning,
                      stacklevel=3)
    return torch_grad(geom, direction, dy, x, w)


def torch_grad(geom: ConvGeometry, direction: str, dy: torch.Tensor, x: torch.Tensor,
               w: torch.Tensor) -> torch.Tensor:
    """dX (direction 'dgrad'), dW ('wgrad') or both ('backward': one call) through torch's
    convolution_backward (cuDNN on a GPU): the fallback, the tests' reference and the
    benchmarks' baseline."""
    if direction == "backward":
        return torch_grads(geom, dy, x, w)
    if direction not in ("dgrad", "wgrad"):
        raise ValueError(f"direction must be 'dgrad', 'wgrad' or 'backward', got {direction!r}")
    gx, gw = torch_grads(geom, dy, x, w, direction == "dgrad", direction == "wgrad")
    return gw if direction == "wgrad" else gx


def torch_grads(geom: ConvGeometry, dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor,
                need_x: bool = True, need_w: bool = True
                ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """(dX, dW) of one torch ``convolution_backward`` call, None where not needed: what
    cuDNN's backward of a conv computes, the benchmarks' baseline for ``gradients``."""
    lead = 3 - geom.dims
    pad_lo, pad_hi = geom.pad[lead:], geom.pads_hi[lead:]
    if pad_lo != pad_hi:  # asymmetric 'same' padding: pad explicitly, crop dX after
        xp = F.pad(x, explicit_pads(pad_lo, pad_hi))
        pad = (0,) * geom.dims
    else:
        xp, pad = x, pad_lo
    gx, gw, _ = torch.ops.aten.convolution_backward(
        dy, xp, w, None, list(geom.stride[lead:]), list(pad), list(geom.dilation[lead:]),
        False, [0] * geom.dims, geom.g, [need_x, need_w, False])
    if gx is not None and xp is not x:
        idx = [slice(None), slice(None)] + [slice(lo, lo + size) for lo, size in
                                            zip(pad_lo, x.shape[2:])]
        gx = gx[tuple(idx)]
    return gx, gw
