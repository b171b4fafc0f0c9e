"""Filter taps that read only padding, and the smaller convolution without them.

A 3x3x3 filter over a clip of one frame (ResNeXt3D-50's layer4 at 8 or 16 frames) reads
input only with its middle depth tap: the other two meet zero padding for every output.
Dropping such taps from the ends of an axis leaves the same output (``trim_dead_taps``:
fewer taps, smaller padding, the same output size) for a filter that is a view of the
stored one (``live_filter``). The forward dispatch runs that smaller convolution; the
gradient directions keep the stored geometry.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import torch

from .geometry import ConvGeometry


def live_tap_range(size: int, taps: int, stride: int, pad_lo: int, pad_hi: int,
                   dilation: int) -> tuple[int, int]:
    """(first, last) taps of one axis that read an input element for at least one output;
    (0, taps - 1) where none does (the output is the bias alone: nothing to drop)."""
    out = (size + pad_lo + pad_hi - dilation * (taps - 1) - 1) // stride + 1
    live = []
    for j in range(taps):
        first = j * dilation - pad_lo  # input index the first output reads through tap j
        o = max(0, -(first // stride))  # the first output reading index >= 0 through it
        if o < out and 0 <= first + o * stride < size:
            live.append(j)
    return (live[0], live[-1]) if live else (0, taps - 1)


@lru_cache(maxsize=4096)  # read by trim_dead_taps and by live_filter on each launch
def live_window(geom: ConvGeometry) -> tuple[tuple[int, int], ...]:
    """(first tap, taps kept) along depth, height and width: the taps of each axis from its
    first to its last live one, kept where the smaller padding stays >= 0."""
    window = []
    for size, taps, st, lo, hi, dl in zip((geom.d, geom.h, geom.w), (geom.t, geom.r, geom.s),
                                          geom.stride, geom.pad, geom.pads_hi, geom.dilation):
        first, last = live_tap_range(size, taps, st, lo, hi, dl)
        if lo - first * dl < 0 or hi - (taps - 1 - last) * dl < 0:
            first, last = 0, taps - 1  # (a dilated axis whose padding would go negative)
        window.append((first, last - first + 1))
    return tuple(window)


@lru_cache(maxsize=4096)  # on every forward launch that is not a recorded plan's replay
def trim_dead_taps(geom: ConvGeometry) -> ConvGeometry:
    """``geom`` without the taps that read only padding (an equal geometry where it has none):
    same input, same output size, same output."""
    window = live_window(geom)
    full = (geom.t, geom.r, geom.s)
    if all(first == 0 and kept == taps for (first, kept), taps in zip(window, full)):
        return geom
    pad = tuple(lo - first * dl for lo, (first, _), dl in zip(geom.pad, window, geom.dilation))
    pad_hi = tuple(hi - (taps - first - kept) * dl for hi, (first, kept), taps, dl
                   in zip(geom.pads_hi, window, full, geom.dilation))
    (_, t), (_, r), (_, s) = window
    trimmed = replace(geom, t=t, r=r, s=s, pad=pad, pad_hi=pad_hi)
    if trimmed.out_spatial != geom.out_spatial:  # the window keeps every output
        raise AssertionError(f"dropping dead taps changed the output of {geom.describe()}")
    return trimmed


def has_dead_taps(geom: ConvGeometry) -> bool:
    """Whether ``trim_dead_taps`` drops any tap of ``geom``."""
    return trim_dead_taps(geom) != geom


def live_filter(w: torch.Tensor, geom: ConvGeometry) -> torch.Tensor:
    """The view of a [K, C/G, T, R, S] filter that ``trim_dead_taps(geom)`` reads (``w``
    itself where no tap is dropped)."""
    if not has_dead_taps(geom):
        return w
    (d0, dn), (h0, hn), (w0, wn) = live_window(geom)
    return w[:, :, d0:d0 + dn, h0:h0 + hn, w0:w0 + wn]
