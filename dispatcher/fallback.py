"""The torch path for what no family runs: same result, one warning per reason."""

from __future__ import annotations

import threading
import warnings

import torch
import torch.nn.functional as F

from .args import ParsedCall
from .settings import strict

_warned: set[str] = set()
_lock = threading.Lock()

ACTIVATION_FNS = {
    None: lambda y: y, "none": lambda y: y, "relu": F.relu, "relu6": F.relu6,
    "gelu": F.gelu, "silu": F.silu,
}


class FallbackWarning(UserWarning):
    """A convolution ran through torch.nn.functional instead of a convdispatch kernel."""


def explicit_pads(pad_lo, pad_hi) -> list[int]:
    """F.pad's argument (last dim first) for per-side padding of the spatial dims."""
    return [v for lo, hi in zip(reversed(pad_lo), reversed(pad_hi)) for v in (lo, hi)]


def torch_conv(p: ParsedCall, dims: int, activation: str | None) -> torch.Tensor:
    """Reference semantics of conv + bias + residual + activation, in torch."""
    x = p.x
    pad_lo, pad_hi = p.padding, p.padding_hi
    padding: tuple[int, ...] = pad_lo
    if pad_lo != pad_hi:
        # Asymmetric 'same' padding: pad explicitly, as torch does internally.
        x = F.pad(x, explicit_pads(pad_lo, pad_hi))
        padding = (0,) * dims
    conv = F.conv2d if dims == 2 else F.conv3d
    y = conv(x, p.w, p.bias, p.stride, padding, p.dilation, p.groups)
    if p.residual is not None:
        y = y + p.residual.reshape(y.shape)
    return ACTIVATION_FNS[activation](y)


def fall_back(p: ParsedCall, dims: int, activation: str | None, reason: str) -> torch.Tensor:
    if strict():
        raise RuntimeError(f"convdispatch (strict mode): no kernel for this call: {reason}")
    with _lock:
        first = reason not in _warned
        _warned.add(reason)
    if first:
        warnings.warn(f"convdispatch: using torch.nn.functional.conv{dims}d: {reason}",
                      FallbackWarning, stacklevel=4)
    return torch_conv(p, dims, activation)
