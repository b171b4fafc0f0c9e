"""``convdispatch::conv``: the operator torch.compile and torch.export trace instead of Python.

Eager calls keep the dispatcher's fast path (a recorded plan replayed per
call). While dynamo traces, ``conv2d``/``conv3d`` emit this opaque operator
instead: its fake implementation gives the output's shape, dtype and strides
(the input's memory format, as the eager path produces), and its real
implementation is the eager dispatcher, so a compiled graph runs the same
kernels, choices and fallbacks as eager code.

Its autograd formula (``register_autograd``) computes dX and dW through
``convdispatch::conv_grad``, another opaque operator whose real implementation is
the dispatcher's gradient path (the dgrad/wgrad kernels, chosen per direction), so
a compiled training step runs the same gradient kernels as eager autograd; the
bias's and residual's gradients and the ReLU/ReLU6 masks are torch ops in the
traced backward. GELU and SiLU are applied outside the operator while gradients
are traced (their gradients need the pre-activation, which the operator does not
return).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from . import args as argcheck
from .fallback import ACTIVATION_FNS

OP_NAME = "convdispatch::conv"
SCHEMA = ("(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
          "int[] dilation, int groups, str activation, Tensor? residual, str padding_str, "
          "int dims) -> Tensor")
# Inductor must hand the operator the strides it was traced with: the output's
# memory format follows the input's.
_TAGS = tuple(getattr(torch.Tag, n) for n in ("needs_exact_strides",) if hasattr(torch.Tag, n))


GRAD_OP_NAME = "convdispatch::conv_grad"
GRAD_SCHEMA = ("(Tensor grad, Tensor input, Tensor weight, int[] stride, int[] padding, "
               "int[] dilation, int groups, str padding_str, int dims, str direction) -> Tensor")
_FUSED_GRAD_ACTIVATIONS = ("none", "relu", "relu6")  # the output alone gives their gradient


def _define(fn, name: str = OP_NAME, schema: str = SCHEMA):
    try:
        return torch.library.custom_op(name, mutates_args=(), schema=schema, tags=_TAGS)(fn)
    except TypeError:  # torch < 2.5 has no ``tags`` argument
        return torch.library.custom_op(name, mutates_args=(), schema=schema)(fn)


def _batched_format(x: torch.Tensor, dims: int) -> torch.memory_format:
    """Memory format of the output: the input's, as the eager dispatcher allocates it."""
    xb = x.unsqueeze(0) if x.dim() == dims + 1 else x
    if xb.dim() == dims + 2 and argcheck.layout_of(xb) == "channels_last":
        return torch.channels_last if dims == 2 else torch.channels_last_3d
    return torch.contiguous_format


def _empty_out(x: torch.Tensor, shape: Sequence, dims: int, device=None) -> torch.Tensor:
    """An empty output of ``shape`` (as returned) with the strides the operator promises."""
    unbatched = x.dim() == dims + 1
    full = [1, *shape] if unbatched else list(shape)
    out = torch.empty(full, dtype=x.dtype, device=device or x.device,
                      memory_format=_batched_format(x, dims))
    return out.squeeze(0) if unbatched else out


def _spatial_out(x, w, stride, padding, dilation, padding_str: str, dims: int) -> list:
    """Output spatial sizes; works on symbolic sizes too."""
    sizes, taps = list(x.shape[-dims:]), list(w.shape[2:])
    st = argcheck._tuple("stride", list(stride), dims, f"conv{dims}d")
    dl = argcheck._tuple("dilation", list(dilation), dims, f"conv{dims}d")
    if padding_str == "same":
        return sizes
    pad = (0,) * dims if padding_str == "valid" else argcheck._tuple(
        "padding", list(padding), dims, f"conv{dims}d")
    return [(s + 2 * p - d * (k - 1) - 1) // t + 1
            for s, k, t, p, d in zip(sizes, taps, st, pad, dl)]


def _check_dims(dims: int) -> None:
    if dims not in (2, 3):
        raise ValueError(f"{OP_NAME}: dims must be 2 or 3, got {dims}")


def _static(*tensors) -> bool:
    return all(isinstance(s, int) for t in tensors if t is not None for s in t.shape)


@_define
def conv(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
         stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], groups: int,
         activation: str, residual: torch.Tensor | None, padding_str: str,
         dims: int) -> torch.Tensor:
    """Run the eager dispatcher; the result gets the strides the fake implementation promised."""
    from .api import _conv

    _check_dims(dims)
    out = _conv(dims, input, weight, bias, tuple(stride), padding_str or tuple(padding),
                tuple(dilation), groups, None if activation == "none" else activation, residual)
    want = _empty_out(input, out.shape, dims, device="meta")
    if out.stride() == want.stride():
        return out
    # A torch fallback (float64, no family, ...) may pick another memory format.
    fixed = torch.empty_strided(out.shape, want.stride(), dtype=out.dtype, device=out.device)
    return fixed.copy_(out)


@conv.register_fake
def _conv_fake(input, weight, bias, stride, padding, dilation, groups, activation, residual,
               padding_str, dims):
    _check_dims(dims)
    if _static(input, weight, bias, residual):
        # Same checks and messages as the eager call, raised while tracing.
        p = argcheck.parse(dims, input, weight, bias, tuple(stride), padding_str or tuple(padding),
                           tuple(dilation), groups, residual,
                           None if activation == "none" else activation)
        argcheck.check_residual_shape(p, f"conv{dims}d")
        shape = argcheck.output_shape(p)
    else:
        xb = input.unsqueeze(0) if input.dim() == dims + 1 else input
        shape = [xb.shape[0], weight.shape[0],
                 *_spatial_out(xb, weight, stride, padding, dilation, padding_str, dims)]
    return _empty_out(input, shape[1:] if input.dim() == dims + 1 else shape, dims)


def _conv_grad(grad: torch.Tensor, input: torch.Tensor, weight: torch.Tensor,
               stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
               groups: int, padding_str: str, dims: int, direction: str) -> torch.Tensor:
    """dX ('dgrad', input's shape and strides) or dW ('wgrad', weight's) of a bias-free conv
    for the output gradient ``grad``: the dispatcher's gradient path."""
    from .autograd import call_gradient

    _check_dims(dims)
    out = call_gradient(dims, direction, grad, input, weight, tuple(stride),
                        padding_str or tuple(padding), tuple(dilation), groups)
    like = input if direction == "dgrad" else weight
    want = torch.empty_like(like, device="meta", memory_format=torch.preserve_format)
    if out.stride() == want.stride():
        return out
    fixed = torch.empty_like(like, memory_format=torch.preserve_format)
    return fixed.copy_(out)


conv_grad = _define(_conv_grad, GRAD_OP_NAME, GRAD_SCHEMA)


@conv_grad.register_fake
def _conv_grad_fake(grad, input, weight, stride, padding, dilation, groups, padding_str, dims,
                    direction):
    _check_dims(dims)
    if direction not in ("dgrad", "wgrad"):
        raise ValueError(f"{GRAD_OP_NAME}: direction must be 'dgrad' or 'wgrad', got "
                         f"{direction!r}")
    like = input if direction == "dgrad" else weight
    return torch.empty_like(like, memory_format=torch.preserve_format)


def _setup_context(ctx, inputs, output) -> None:
    (input, weight, bias, stride, padding, dilation, groups, activation, residual, padding_str,
     dims) = inputs
    ctx.save_for_backward(input, weight, output if activation in ("relu", "relu6") else None)
    ctx.args = (list(stride), list(padding), list(dilation), groups, padding_str, dims)
    ctx.activation = activation
    ctx.residual_shape = None if residual is None else residual.shape
    ctx.unbatched = input.dim() == dims + 1


def _conv_backward(ctx, grad):
    from .autograd import epilogue_grad

    x, w, y = ctx.saved_tensors
    if ctx.activation not in _FUSED_GRAD_ACTIVATIONS:
        raise RuntimeError(f"{OP_NAME}: no gradient through a fused {ctx.activation!r}; "
                           "conv2d/conv3d apply it outside the operator when gradients "
                           "are traced")
    need_x, need_w, need_b, _, _, _, _, _, need_r = ctx.needs_input_grad[:9]
    stride, padding, dilation, groups, padding_str, dims = ctx.args
    dz = epilogue_grad(grad, y, None if ctx.activation == "none" else ctx.activation)
    dx = dw = db = dr = None
    if need_x:
        dx = conv_grad(dz, x, w, stride, padding, dilation, groups, padding_str, dims, "dgrad")
    if need_w:
        dw = conv_grad(dz, x, w, stride, padding, dilation, groups, padding_str, dims, "wgrad")
    if need_b:
        lead = [] if ctx.unbatched else [0]
        acc = torch.float64 if dz.dtype == torch.float64 else torch.float32
        db = dz.sum(dim=[*lead, *range(dz.dim() - dims, dz.dim())], dtype=acc).to(dz.dtype)
    if need_r:
        dr = dz.reshape(ctx.residual_shape)
    return dx, dw, db, None, None, None, None, None, dr, None, None


conv.register_autograd(_conv_backward, setup_context=_setup_context)


def _ints(value) -> list:
    return list(value) if isinstance(value, (tuple, list, torch.Size)) else [value]


def _torch_path(dims, input, weight, bias, stride, padding, dilation, groups, activation,
                residual) -> torch.Tensor:
    """Differentiable torch convolution with the fused epilogue's semantics."""
    fn = F.conv2d if dims == 2 else F.conv3d
    y = fn(input, weight, bias, stride, padding, dilation, groups)
    if residual is not None:
        # An unbatched call may pass its residual with a batch of 1, as in eager.
        allowed = [tuple(y.shape)] + ([(1, *y.shape)] if input.dim() == dims + 1 else [])
        if tuple(residual.shape) not in allowed:
            raise RuntimeError(f"conv{dims}d(): residual of size {list(residual.shape)} must "
                               f"match the output size {list(y.shape)}")
        y = y + residual.reshape(y.shape)
    if activation not in ACTIVATION_FNS:
        raise ValueError(f"conv{dims}d(): activation must be one of "
                         f"{argcheck.ACTIVATION_NAMES[1:]} or None, got {activation!r}")
    return ACTIVATION_FNS[activation](y)


def traced_conv(dims: int, input, weight, bias, stride, padding, dilation, groups, activation,
                residual) -> torch.Tensor:
    """What ``conv2d``/``conv3d`` do while dynamo traces them."""
    act = "none" if activation is None else activation
    outside = None
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad
                                       for t in (input, weight, bias, residual)):
        if input.dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
            return _torch_path(dims, input, weight, bias, stride, padding, dilation, groups,
                               activation, residual)
        if act not in _FUSED_GRAD_ACTIVATIONS:
            outside, act = act, "none"
    pad_str = padding if isinstance(padding, str) else ""
    y = torch.ops.convdispatch.conv(
        input, weight, bias, _ints(stride), [] if pad_str else _ints(padding), _ints(dilation),
        groups, act, residual, pad_str, dims)
    return y if outside is None else ACTIVATION_FNS[outside](y)
