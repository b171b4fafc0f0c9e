"""Seeded random convolution geometries that cover what real networks leave out.

Channels are log-uniform in [3, 1024]; spatial sizes are often odd or not square;
strides 1-3, dilation, grouped and depthwise convs, 1/3/5/7 and asymmetric
(1x7, 7x1, ...) filters, about one problem in five 3D. Every draw is a valid
``ConvGeometry`` under the size caps of ``problem.py``. Only ``random.Random``'s
``random()`` is used, so a seed gives the same problems on every platform, and
``random_problems(seed, m)`` is a prefix of ``random_problems(seed, m + 1)``.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace

from ...kernels.geometry import ConvGeometry
from .problem import Problem, within_caps

# Seeds 0..999 belong to training; seeds from 1000 on are reserved for the holdout.
HOLDOUT_SEED_MIN = 1000
MAX_SEED = 2**31 - 1

_BATCHES = ((1, 14), (2, 8), (4, 10), (8, 14), (16, 14), (32, 12), (64, 10),
            (128, 5), (256, 3), (0, 10))  # 0: any batch in 3..63
_FILTERS_2D = (((1, 1), 25), ((3, 3), 35), ((5, 5), 8), ((7, 7), 8), ((1, 7), 5),
               ((7, 1), 5), ((1, 3), 5), ((3, 1), 5), ((1, 5), 2), ((5, 1), 2))
_FILTERS_3D = (((1, 1, 1), 25), ((3, 3, 3), 40), ((1, 3, 3), 12), ((3, 1, 1), 8),
               ((3, 5, 5), 5), ((5, 7, 7), 5), ((3, 7, 7), 5))
_KINDS = (("dense", 60), ("grouped", 20), ("depthwise", 20))
_GROUPS = ((2, 2), (4, 3), (8, 3), (16, 2), (32, 3), (64, 1))


def set_of_seed(seed: int) -> str:
    """The set a seed's problems belong to: 'random_train' or 'random_holdout'."""
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be an int in [0, {MAX_SEED}], got {seed!r}")
    return "random_holdout" if seed >= HOLDOUT_SEED_MIN else "random_train"


class _Draw:
    """Sampling helpers built on ``Random.random()`` alone."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def uniform(self) -> float:
        return self._rng.random()

    def chance(self, p: float) -> bool:
        return self.uniform() < p

    def int_between(self, lo: int, hi: int) -> int:
        return lo + min(hi - lo, int(self.uniform() * (hi - lo + 1)))

    def log_int(self, lo: int, hi: int) -> int:
        v = math.exp(math.log(lo) + self.uniform() * (math.log(hi + 1) - math.log(lo)))
        return max(lo, min(hi, int(v)))

    def weighted(self, table):
        total = sum(w for _, w in table)
        x = self.uniform() * total
        for item, w in table:
            x -= w
            if x < 0:
                return item
        return table[-1][0]


def _spatial(draw: _Draw, lo: int, hi: int) -> int:
    v = draw.log_int(lo, hi)
    # Real inputs are mostly even; odd sizes exercise the edge masks.
    return v | 1 if draw.chance(0.5) else v


def _channels(draw: _Draw, kind: str) -> tuple[int, int, int]:
    c, k = draw.log_int(3, 1024), draw.log_int(3, 1024)
    if kind == "depthwise":
        k = c * 2 if (draw.chance(0.2) and 2 * c <= 1024) else c
        return c, k, c
    if kind == "grouped":
        g = draw.weighted(_GROUPS)
        # Round to multiples of g; 1024 is a multiple of every g, so the bound holds.
        c, k = max(g, g * round(c / g)), max(g, g * round(k / g))
        return c, k, g
    return c, k, 1


def _draw_geometry(draw: _Draw) -> ConvGeometry:
    dims = 3 if draw.chance(0.2) else 2
    kind = draw.weighted(_KINDS)
    c, k, g = _channels(draw, kind)
    if dims == 3:
        t, r, s = draw.weighted(_FILTERS_3D)
        d, h = draw.log_int(4, 32), _spatial(draw, 7, 112)
    else:
        (r, s), t, d = draw.weighted(_FILTERS_2D), 1, 1
        h = _spatial(draw, 5, 256)
    if kind == "depthwise" and (t, r, s) == (1, 1, 1):
        r = s = 3  # a 1x1 depthwise conv is a per-channel scale, not a conv anyone runs
    w = h if draw.chance(0.7) else _spatial(draw, 5, 256 if dims == 2 else 112)
    st = draw.weighted(((1, 60), (2, 32), (3, 8)))
    st_d = (draw.weighted(((1, 70), (2, 30))) if t > 1 or st > 1 else 1) if dims == 3 else 1
    dil = 1
    if st == 1 and max(r, s) > 1 and draw.chance(0.25):
        dil = draw.weighted(((2, 70), (3, 30)))
    dilation = (1, dil, dil)
    # Mostly 'same' padding; sometimes none ('valid' convs, e.g. Inception stems).
    same = draw.chance(0.8)
    pad = tuple(dl * (kk - 1) // 2 if same else 0 for kk, dl in zip((t, r, s), dilation))
    n = draw.weighted(_BATCHES) or draw.int_between(3, 63)
    geom = ConvGeometry(n=n, c=c, k=k, h=h, w=w, r=r, s=s, g=g, d=d, t=t,
                        stride=(st_d, st, st), pad=pad, dilation=dilation, dims=dims)
    # Shrink the batch before giving up on a geometry that is over the caps.
    while not within_caps(geom) and geom.n > 1:
        geom = replace(geom, n=geom.n // 2)
    return geom


def random_geometries(seed: int, count: int) -> list[ConvGeometry]:
    """``count`` distinct valid geometries (float16) for ``seed``."""
    set_of_seed(seed)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ValueError(f"count must be a non-negative int, got {count!r}")
    draw, out, seen = _Draw(seed), [], set()
    while len(out) < count:
        try:
            geom = _draw_geometry(draw)
        except ValueError:
            continue  # e.g. the filter does not fit the input: draw again
        if within_caps(geom) and geom.key() not in seen:
            seen.add(geom.key())
            out.append(geom)
    return out


def random_problems(seed: int, count: int, dtype: str = "float16") -> list[Problem]:
    """Problems named ``r<seed>_<i>`` in set 'random_train' or 'random_holdout' (by seed)."""
    set_name = set_of_seed(seed)
    return [Problem.make(set_name, f"r{seed}_{i}", geom).with_dtype(dtype)
            for i, geom in enumerate(random_geometries(seed, count))]
