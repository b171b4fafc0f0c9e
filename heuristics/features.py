"""Features of (geometry, candidate) pairs: the one code path for training and dispatch.

``feature_matrix`` builds one row per candidate. Geometry columns are computed
once per call; candidate columns are numpy vectors over all candidates, so a
call costs about the same for 10 or 200 candidates. Training builds its rows
through ``sweep_feature_matrix``, which calls ``feature_matrix`` per problem.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from ..kernels.base import Candidate, Config
from ..kernels.device import DeviceSpec
from ..kernels.geometry import DTYPES, ConvGeometry

# Bump whenever a feature's meaning, order or formula changes: models trained on
# another version are refused at load time.
SCHEMA_VERSION = 1

FAMILY_NAMES = ("implicit_gemm", "pointwise", "grouped_gemm", "grouped_direct", "stem", "splitk")

# How a family tiles the problem, which fixes its effective M / N / K:
# gemm: per-group implicit GEMM, N = K/g, reduction t*r*s*ceil(cg/BK) steps;
# flat: reduction flattened over (t, r, s, c), N = all output channels;
# direct: FMA over output pixels x all output channels, reduction not tiled.
FAMILY_KIND = {"implicit_gemm": "gemm", "pointwise": "gemm", "grouped_gemm": "gemm",
               "splitk": "gemm", "stem": "flat", "grouped_direct": "direct"}

_GEOM_NAMES = (
    "n", "c", "k", "g", "d", "h", "w", "t", "r", "s",
    "stride_d", "stride_h", "stride_w", "pad_d", "pad_h", "pad_w", "dil_d", "dil_h", "dil_w",
    "dims", *(f"dtype_{d}" for d in DTYPES), "elem_bytes", "channels_last",
    "od", "oh", "ow", "cg", "kg", "trs", "depthwise", "pointwise",
    "gemm_m", "gemm_n", "gemm_k", "log2_gemm_m", "log2_gemm_n", "log2_gemm_k",
    "log2_flops", "log2_min_bytes", "arith_intensity", "sm_count",
)
_KNOB_NAMES = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SPLIT_K", "num_warps", "num_stages")
_DERIVED_NAMES = (
    "tiles_m", "tiles_n", "k_steps", "k_steps_per_program", "programs", "log2_programs",
    "waves", "waves_ceil", "tail_frac", "wave_eff", "waste_m", "waste_n", "waste_k",
    "smem_bytes", "tile_mn", "tile_intensity", "log2_flops_per_program",
    "log2_splitk_ws_bytes", "acc_per_thread",
)
FEATURE_NAMES: tuple[str, ...] = (
    _GEOM_NAMES + tuple(f"fam_{f}" for f in FAMILY_NAMES) + _KNOB_NAMES + _DERIVED_NAMES
)
N_FEATURES = len(FEATURE_NAMES)
_N_GEOM = len(_GEOM_NAMES)
_N_FAM = len(FAMILY_NAMES)
_KIND_CODE = {"gemm": 0, "flat": 1, "direct": 2}


def _log2(x: float) -> float:
    return math.log2(max(x, 1))


def geometry_vector(geom: ConvGeometry, device: DeviceSpec) -> np.ndarray:
    """The candidate-independent columns (``FEATURE_NAMES[:len(_GEOM_NAMES)]``)."""
    od, oh, ow = geom.out_spatial
    flops = geom.flops
    min_bytes = geom.min_bytes
    vals = (
        geom.n, geom.c, geom.k, geom.g, geom.d, geom.h, geom.w, geom.t, geom.r, geom.s,
        *geom.stride, *geom.pad, *geom.dilation, geom.dims,
        *(float(geom.dtype == d) for d in DTYPES), geom.elem_bytes,
        float(geom.layout == "channels_last"),
        od, oh, ow, geom.cg, geom.kg, geom.t * geom.r * geom.s,
        float(geom.is_depthwise), float(geom.is_pointwise),
        geom.gemm_m, geom.gemm_n, geom.gemm_k,
        _log2(geom.gemm_m), _log2(geom.gemm_n), _log2(geom.gemm_k),
        _log2(flops), _log2(min_bytes), flops / max(min_bytes, 1), device.sm_count,
    )
    return np.asarray(vals, dtype=np.float64)


@lru_cache(maxsize=8192)
def _candidate_row(family: str, config: Config) -> tuple[float, ...]:
    """Family one-hot, kind code and knobs of one candidate (absent knob: 0, SPLIT_K 1)."""
    if family not in FAMILY_KIND:
        raise ValueError(f"unknown kernel family {family!r}: feature schema v{SCHEMA_VERSION} "
                         f"knows {FAMILY_NAMES}")
    onehot = tuple(float(family == f) for f in FAMILY_NAMES)
    knobs = tuple(float(config.get(k, 1 if k in ("SPLIT_K", "GROUP_M") else 0))
                  for k in _KNOB_NAMES)
    return (*onehot, float(_KIND_CODE[FAMILY_KIND[family]]), *knobs)


def candidate_table(candidates: Sequence[Candidate]) -> np.ndarray:
    """[n, families + 1 + knobs] array: one-hot, kind code, knob values."""
    rows = []
    for cand in candidates:
        try:
            rows.append(_candidate_row(cand.family, cand.config))
        except AttributeError:
            raise TypeError(f"expected Candidate objects, got {type(cand).__name__}") from None
    return np.array(rows, dtype=np.float64).reshape(len(rows), _N_FAM + 1 + len(_KNOB_NAMES))


def _cdiv(a, b):
    return np.ceil(a / b)


def feature_matrix(geom: ConvGeometry, candidates: Sequence[Candidate],
                   device: DeviceSpec) -> np.ndarray:
    """float32 [len(candidates), N_FEATURES] features, columns in ``FEATURE_NAMES`` order."""
    if not isinstance(geom, ConvGeometry):
        raise TypeError(f"geom must be a ConvGeometry, got {type(geom).__name__}")
    if not isinstance(device, DeviceSpec):
        raise TypeError(f"device must be a DeviceSpec, got {type(device).__name__}")
    tab = candidate_table(candidates)
    n = tab.shape[0]
    out = np.empty((n, N_FEATURES), dtype=np.float64)
    out[:, :_N_GEOM] = geometry_vector(geom, device)
    out[:, _N_GEOM:_N_GEOM + _N_FAM] = tab[:, :_N_FAM]
    kind = tab[:, _N_FAM]
    knobs = tab[:, _N_FAM + 1:]
    out[:, _N_GEOM + _N_FAM:_N_GEOM + _N_FAM + len(_KNOB_NAMES)] = knobs
    bm, bn, bk, _, split, warps, stages = knobs.T

    flat, direct = kind == 1, kind == 2
    m = float(max(geom.gemm_m, 1))
    trs = geom.t * geom.r * geom.s
    n_dim = np.where(kind == 0, float(geom.kg), float(geom.k))
    groups = np.where(kind == 0, float(geom.g), 1.0)
    # Reduction length a program walks, padded to its K tile.
    bk_eff = np.where(direct, 1.0, np.maximum(bk, 1.0))
    k_true = float(max(geom.gemm_k, 1))
    k_steps = np.where(direct, float(trs * geom.cg),
                       np.where(flat, _cdiv(geom.gemm_k, bk_eff),
                                trs * _cdiv(geom.cg, bk_eff)))
    k_padded = np.where(direct, k_true, k_steps * bk_eff)
    tiles_m = _cdiv(m, bm)
    tiles_n = _cdiv(np.maximum(n_dim, 1.0), bn)
    programs = tiles_m * tiles_n * groups * split
    sms = float(max(device.sm_count, 1))
    waves = programs / sms
    waves_ceil = np.ceil(waves)
    elem = float(geom.elem_bytes)

    d = _N_GEOM + _N_FAM + len(_KNOB_NAMES)
    out[:, d + 0] = tiles_m
    out[:, d + 1] = tiles_n
    out[:, d + 2] = k_steps
    out[:, d + 3] = _cdiv(k_steps, split)
    out[:, d + 4] = programs
    out[:, d + 5] = np.log2(np.maximum(programs, 1.0))
    out[:, d + 6] = waves
    out[:, d + 7] = waves_ceil
    out[:, d + 8] = (programs % sms) / sms
    out[:, d + 9] = waves / np.maximum(waves_ceil, 1.0)
    out[:, d + 10] = tiles_m * bm / m - 1.0
    out[:, d + 11] = tiles_n * bn / np.maximum(n_dim, 1.0) - 1.0
    out[:, d + 12] = k_padded / k_true - 1.0
    out[:, d + 13] = np.where(direct, 0.0, stages * (bm * bk + bk * bn) * elem)
    out[:, d + 14] = bm * bn
    out[:, d + 15] = bm * bn / (bm + bn)
    out[:, d + 16] = np.log2(np.maximum(2.0 * bm * bn * k_padded / split, 1.0))
    out[:, d + 17] = np.where(split > 1, np.log2(np.maximum(split * m * geom.k * 4.0, 1.0)), 0.0)
    out[:, d + 18] = bm * bn / (32.0 * np.maximum(warps, 1.0))
    return out.astype(np.float32)


def _parse_candidates(families, configs) -> list[Candidate]:
    cache: dict[tuple[str, str], Candidate] = {}
    out = []
    for fam, cfg in zip(families, configs):
        key = (fam, cfg)
        cand = cache.get(key)
        if cand is None:
            cand = cache[key] = Candidate(str(fam), Config.parse(cfg))
        out.append(cand)
    return out


def sweep_feature_matrix(df, group_key: str, devices: dict) -> np.ndarray:
    """Features of every row of a sweep DataFrame, in row order.

    ``group_key`` names the column identifying a problem on one GPU; ``devices``
    maps each problem key to its DeviceSpec. Rows of one problem share their
    geometry (checked by the caller), so each problem makes one
    ``feature_matrix`` call.
    """
    out = np.empty((len(df), N_FEATURES), dtype=np.float32)
    positions = np.arange(len(df))
    for key, idx in df.groupby(group_key, sort=False).indices.items():
        first = df.iloc[idx[0]]
        geom = ConvGeometry.from_row(first)
        cands = _parse_candidates(df["family"].to_numpy()[idx], df["config"].to_numpy()[idx])
        out[positions[idx]] = feature_matrix(geom, cands, devices[key])
    return out


__all__ = ["FAMILY_KIND", "FAMILY_NAMES", "FEATURE_NAMES", "N_FEATURES", "SCHEMA_VERSION",
           "candidate_table", "feature_matrix", "geometry_vector", "sweep_feature_matrix"]
