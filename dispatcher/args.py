"""Argument checks for conv2d/conv3d, with torch.nn.functional's exception types and wording."""

from __future__ import annotations

import operator
from dataclasses import dataclass

import torch

from ..kernels.geometry import ConvGeometry

DTYPE_NAMES = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32"}
# The gradient kernels also take float64 (interpreter gradchecks).
GRAD_DTYPE_NAMES = {**DTYPE_NAMES, torch.float64: "float64"}
ACTIVATION_NAMES = (None, "none", "relu", "relu6", "gelu", "silu")


@dataclass
class ParsedCall:
    """Checked arguments: tensors as given, the geometry, and torch-level facts."""

    x: torch.Tensor
    w: torch.Tensor
    bias: torch.Tensor | None
    residual: torch.Tensor | None
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    padding_hi: tuple[int, ...]
    dilation: tuple[int, ...]
    groups: int
    unbatched: bool
    geom: ConvGeometry | None  # None when no kernel dtype applies (float64, ints, ...)


def _index(v) -> int:
    """``v`` read as torch's argument parser reads an int: ints, numpy ints and one-element
    integer tensors; not bools, floats or strings."""
    if isinstance(v, bool):
        raise TypeError(type(v).__name__)
    if isinstance(v, torch.Tensor):
        if v.numel() != 1 or v.is_floating_point() or v.is_complex():
            raise TypeError("tensor")
        return int(v.item())
    return operator.index(v)


def _tuple(name: str, value, dims: int, fn: str) -> tuple[int, ...]:
    seq = isinstance(value, (tuple, list, torch.Size))
    try:
        vals = tuple(_index(v) for v in value) if seq else (_index(value),)
    except TypeError:
        raise TypeError(f"{fn}(): argument '{name}' must be an int or a tuple of {dims} ints, "
                        f"got {value!r}") from None
    if any(not -(2**63) <= v < 2**63 for v in vals):
        # torch: ValueError for a lone int, TypeError inside a tuple
        exc = TypeError if seq else ValueError
        raise exc(f"{fn}(): argument '{name}' does not fit in int64: {value!r}")
    if len(vals) == 1:
        vals = vals * dims
    if len(vals) != dims:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {dims} values to "
            f"match the convolution dimensions, but got {name}={list(vals)}")
    return vals


def _padding(padding, dims: int, stride, dilation, wshape, fn: str):
    """Explicit (low, high) padding; 'same' is asymmetric for even kernels, like torch."""
    if isinstance(padding, str):
        if padding == "valid":
            zero = (0,) * dims
            return zero, zero
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, wshape)]
            lo = tuple(t // 2 for t in total)
            return lo, tuple(t - low for t, low in zip(total, lo))
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    return padding, padding  # already checked by _tuple


def _check_tensor(name: str, t, fn: str) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be a Tensor, not {type(t).__name__}")


def parse(dims: int, input, weight, bias, stride, padding, dilation, groups, residual,
          activation) -> ParsedCall:
    """Check a conv call the way torch does and build its geometry."""
    fn = f"conv{dims}d"
    _check_tensor("input", input, fn)
    _check_tensor("weight", weight, fn)
    if bias is not None:
        _check_tensor("bias", bias, fn)
    if residual is not None:
        _check_tensor("residual", residual, fn)
    if activation not in ACTIVATION_NAMES:
        raise ValueError(f"{fn}(): activation must be one of {ACTIVATION_NAMES[1:]} or None, "
                         f"got {activation!r}")
    try:
        groups = _index(groups)
    except TypeError:
        raise TypeError(f"{fn}(): argument 'groups' must be int, not "
                        f"{type(groups).__name__}") from None
    if not -(2**63) <= groups < 2**63:
        raise ValueError(f"{fn}(): argument 'groups' does not fit in int64: {groups}")
    # Every argument's type is checked before any value, as torch's parser does.
    stride_t = _tuple("stride", stride, dims, fn)
    dilation_t = _tuple("dilation", dilation, dims, fn)
    if not isinstance(padding, str):
        padding = _tuple("padding", padding, dims, fn)
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {fn}, "
            f"but got input of size: {list(input.shape)}")
    if weight.dim() != dims + 2:
        raise RuntimeError(
            f"{fn}(): expected weight to be {dims + 2}-dimensional, "
            f"but got weight of size {list(weight.shape)}")
    if any(k < 1 for k in weight.shape[2:]):
        raise RuntimeError(f"kernel size should be greater than zero, but got weight of size "
                           f"{list(weight.shape)}")
    if min(stride_t) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation_t) < 1:
        raise RuntimeError("non-positive dilation is not supported")
    pad_lo, pad_hi = _padding(padding, dims, stride_t, dilation_t, weight.shape[2:], fn)
    if min(pad_lo) < 0:
        raise RuntimeError("negative padding is not supported")
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    unbatched = input.dim() == dims + 1
    x = input.unsqueeze(0) if unbatched else input
    k, cg = weight.shape[0], weight.shape[1]
    if k < 1 or k % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0,"
            f" but got weight of size {list(weight.shape)} instead")
    if x.shape[1] != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(x.shape)} to have {cg * groups} channels, but got {x.shape[1]} "
            f"channels instead")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != k):
        raise RuntimeError(
            f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
            f"with {k} elements, but got bias of size {list(bias.shape)} instead")
    if weight.dtype != x.dtype:
        raise RuntimeError(f"Input type ({x.dtype}) and weight type ({weight.dtype}) "
                           f"should be the same")
    if bias is not None and bias.dtype != x.dtype:
        raise RuntimeError(f"Input type ({x.dtype}) and bias type ({bias.dtype}) "
                           f"should be the same")
    others = [("weight", weight), ("bias", bias), ("residual", residual)]
    for name, t in others:
        if t is not None and t.device != x.device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found "
                               f"input on {x.device} and {name} on {t.device}")
    spatial = x.shape[2:]
    for size, kk, lo, hi, dl in zip(spatial, weight.shape[2:], pad_lo, pad_hi, dilation_t):
        if size + lo + hi < dl * (kk - 1) + 1:
            padded = " x ".join(str(s + a + b) for s, a, b in zip(spatial, pad_lo, pad_hi))
            ksz = " x ".join(str(dl * (q - 1) + 1) for q, dl in zip(weight.shape[2:],
                                                                   dilation_t))
            raise RuntimeError(
                f"Calculated padded input size per channel: ({padded}). Kernel size: ({ksz})."
                f" Kernel size can't be greater than actual input size")
    geom = None
    if x.dtype in DTYPE_NAMES and x.shape[1] > 0:
        geom = _geometry(dims, x, weight, bias, stride_t, pad_lo, pad_hi, dilation_t, groups)
    if residual is not None:
        _check_residual(residual, x, geom, fn)
    return ParsedCall(x, weight, bias, residual, stride_t, pad_lo, pad_hi, dilation_t, groups,
                      unbatched, geom)


def layout_of(x: torch.Tensor) -> str:
    fmt = torch.channels_last if x.dim() == 4 else torch.channels_last_3d
    if x.is_contiguous(memory_format=fmt) and not x.is_contiguous():
        return "channels_last"
    return "contiguous"


def grad_geometry(p: ParsedCall, dims: int) -> ConvGeometry | None:
    """The call's geometry for the gradient kernels (float64 included), or None."""
    if p.geom is not None or p.x.dtype not in GRAD_DTYPE_NAMES or p.x.shape[1] == 0:
        return p.geom
    return _geometry(dims, p.x, p.w, p.bias, p.stride, p.padding, p.padding_hi, p.dilation,
                     p.groups)


def _geometry(dims, x, w, bias, stride, pad_lo, pad_hi, dilation, groups) -> ConvGeometry:
    lead = 3 - dims
    ones = (1,) * lead
    spatial = (1,) * lead + tuple(x.shape[2:])
    filt = (1,) * lead + tuple(w.shape[2:])
    return ConvGeometry(
        n=x.shape[0], c=x.shape[1], k=w.shape[0], g=groups,
        d=spatial[0], h=spatial[1], w=spatial[2], t=filt[0], r=filt[1], s=filt[2],
        stride=ones + stride, pad=(0,) * lead + pad_lo, pad_hi=(0,) * lead + pad_hi,
        dilation=ones + dilation, dims=dims, dtype=GRAD_DTYPE_NAMES[x.dtype],
        layout=layout_of(x), bias=bias is not None,
    )


def output_shape(p: ParsedCall) -> list[int]:
    out = [p.x.shape[0], p.w.shape[0]]
    for size, kk, st, lo, hi, dl in zip(p.x.shape[2:], p.w.shape[2:], p.stride, p.padding,
                                        p.padding_hi, p.dilation):
        out.append((size + lo + hi - dl * (kk - 1) - 1) // st + 1)
    return out


def _check_residual(residual, x, geom, fn) -> None:
    if residual.dtype != x.dtype:
        raise RuntimeError(f"{fn}(): residual dtype {residual.dtype} must match the input's "
                           f"{x.dtype}")


def check_residual_shape(p: ParsedCall, fn: str) -> None:
    if p.residual is None:
        return
    want = output_shape(p)
    got = list(p.residual.shape)
    if p.unbatched and got == want[1:]:
        return
    if got != want:
        raise RuntimeError(f"{fn}(): residual of size {got} must match the output size {want}")
