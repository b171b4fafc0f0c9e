"""Features of (geometry, candidate) pairs: the one code path for training and dispatch.

``feature_matrix`` builds one row per candidate. Geometry columns are computed
once per call; candidate columns are numpy vectors over all candidates, so a
call costs about the same for 10 or 200 candidates. Training builds its rows
through ``sweep_feature_matrix``, which calls ``feature_matrix`` per problem.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from ..kernels.base import DIRECTIONS, Candidate, Config
from ..kernels.dead_taps import trim_dead_taps
from ..kernels.device import DeviceSpec
from ..kernels.families import FAMILIES
from ..kernels.geometry import DTYPES, ConvGeometry
from ..kernels.grad_common import forward_gemm_view
from ..kernels.grouped_flat import GroupedFlatFamily
from ..kernels.grouped_packed import packed_iters, taps_per_step
from ..kernels.implicit_gemm_tma import ImplicitGemmTmaFamily, box_images
from ..kernels.wgrad_gemm import split_steps

# Bump whenever a feature's meaning, order or formula changes: models trained on
# another version are refused at load time.
SCHEMA_VERSION = 22

FORWARD_FAMILIES = ("implicit_gemm", "pointwise", "grouped_gemm", "grouped_direct", "stem",
                    "splitk", "grouped_packed", "depthwise", "depthwise_rows", "grouped_rows",
                    "depthwise_span", "pointwise_tma", "implicit_gemm_tma",
                    "pointwise_tma_persistent", "implicit_gemm_tma_persistent", "grouped_flat")
GRAD_FAMILIES = ("dgrad_gemm", "dgrad_packed", "dgrad_direct", "dgrad_depthwise",
                 "wgrad_gemm", "wgrad_packed", "wgrad_direct", "dgrad_implicit_gemm",
                 "dgrad_splitk", "dgrad_pointwise", "dgrad_pointwise_tma",
                 "dgrad_grouped_packed", "dgrad_grouped_rows", "dgrad_depthwise_span",
                 "wgrad_pointwise_tma", "dgrad_implicit_gemm_tma", "wgrad_implicit_gemm_tma",
                 "wgrad_stem", "wgrad_depthwise_taps", "dgrad_stem",
                 "wgrad_depthwise_rows", "wgrad_grouped_taps", "wgrad_staged_tma",
                 "wgrad_grouped_halo", "wgrad_depthwise_span", "wgrad_grouped_flat",
                 "dgrad_grouped_flat")
FAMILY_NAMES = FORWARD_FAMILIES + GRAD_FAMILIES
# Forward families whose pixel tiles are TMA boxes of one or more images.
_BOX_FAMILIES = frozenset(f.name for f in FAMILIES if isinstance(f, ImplicitGemmTmaFamily))
# Forward families whose pixel tiles are items of whole output rows (``items``).
_ITEM_FAMILIES = {f.name: f for f in FAMILIES if isinstance(f, GroupedFlatFamily)}
# The direction each family computes (a model is trained per direction), as registered.
FAMILY_DIRECTION = {f.name: f.direction for f in FAMILIES}
# Families of a direction of their own, featured as another family (its one-hot and kind;
# their own launch grid): a model is trained per direction, so inside theirs the one-hot
# only tells its families apart, and the other directions' models keep their schema. The
# fused kernel takes the one of the wgrad kernel it extends; the pair of the two
# directions' choices (no config: the knobs its kind needs read 1) the dX flat kernel's.
FEATURE_FAMILY = {"backward_grouped_flat": "wgrad_grouped_flat",
                  "backward_pair": "dgrad_grouped_flat"}
_KNOBLESS = frozenset({"backward_pair"})

# How a family tiles the problem, which fixes its effective M / N / K:
# gemm: per-group implicit GEMM, N = K/g, reduction t*r*s*ceil(cg/BK) steps;
# flat: reduction flattened over (t, r, s, c), N = all output channels;
# direct: FMA over output pixels x all output channels, reduction not tiled (a
# TILE_W knob makes the BLOCK_M pixels a TILE_H x TILE_W block, else a flat run);
# packed: one program covers GPT = min(BLOCK_N // K/g, g) whole groups, its
# reduction runs over their GPT * C/g channels (block-diagonal weight tile); without a
# BLOCK_K knob (grouped_rows: one dot over the whole run) a step is one channel;
# span: FMA over BLOCK_M output rows x BLOCK_N elements of the (column, channel) row.
FAMILY_KIND = {"implicit_gemm": "gemm", "pointwise": "gemm", "pointwise_tma": "gemm",
               "implicit_gemm_tma": "gemm", "pointwise_tma_persistent": "gemm",
               "implicit_gemm_tma_persistent": "gemm",
               "grouped_gemm": "gemm",
               "splitk": "gemm", "stem": "flat", "grouped_direct": "direct",
               "grouped_packed": "packed", "grouped_rows": "packed", "grouped_flat": "packed",
               "depthwise": "direct",
               "depthwise_rows": "direct", "depthwise_span": "span",
               **dict.fromkeys(GRAD_FAMILIES, "grad")}
# grad: the tile counts, waves and waste come from the family's launch grid
# (GradFamily.grid, kernels/grad_common.py GradGrid).

_GEOM_NAMES = (
    "n", "c", "k", "g", "d", "h", "w", "t", "r", "s",
    "stride_d", "stride_h", "stride_w", "pad_d", "pad_h", "pad_w", "dil_d", "dil_h", "dil_w",
    "dims", *(f"dtype_{d}" for d in DTYPES), "elem_bytes", "channels_last",
    "od", "oh", "ow", "cg", "kg", "trs", "depthwise", "pointwise",
    "gemm_m", "gemm_n", "gemm_k", "log2_gemm_m", "log2_gemm_n", "log2_gemm_k",
    "log2_flops", "log2_min_bytes", "arith_intensity", "sm_count",
)
# ITEMS: pixel tiles one program walks (grouped_flat); WGMMA: its taps as warpgroup mmas
# (v21); TMA: its phase images copied as TMA boxes, where the twin without it uses cp.async
# (v22: before, the two twins had the same features and so the same score).
_KNOB_NAMES = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SPLIT_K", "num_warps", "num_stages",
               "TILE_W", "L1_TAPS", "ITEMS", "WGMMA", "TMA")
_DERIVED_NAMES = (
    "tiles_m", "tiles_n", "k_steps", "k_steps_per_program", "programs", "log2_programs",
    "waves", "waves_ceil", "tail_frac", "wave_eff", "waste_m", "waste_n", "waste_k",
    "smem_bytes", "tile_mn", "tile_intensity", "log2_flops_per_program",
    "log2_splitk_ws_bytes", "acc_per_thread", "halo_ratio",
)
# Channel alignment: the largest power of two (capped at _ALIGN_CAP) dividing C, K, C/g and
# K/g. Odd channel counts lose vectorised loads, which changes which tile is fastest.
_ALIGN_NAMES = ("align_c", "align_k", "align_cg", "align_kg")
_ALIGN_CAP = 64
# The direction, and the GEMM the candidate's family computes (forward: the conv's).
_VIEW_NAMES = ("dir_forward", "dir_dgrad", "dir_wgrad",
               "view_log2_m", "view_log2_n", "view_log2_red", "view_log2_mult")
FEATURE_NAMES: tuple[str, ...] = (
    _GEOM_NAMES + tuple(f"fam_{f}" for f in FAMILY_NAMES) + _KNOB_NAMES + _DERIVED_NAMES
    + _ALIGN_NAMES + _VIEW_NAMES
)
N_FEATURES = len(FEATURE_NAMES)
_N_GEOM = len(_GEOM_NAMES)
_N_FAM = len(FAMILY_NAMES)
_KINDS = ("gemm", "flat", "direct", "packed", "grad", "span")
# Knobs the formulas below divide by, per kind: a config without them is malformed.
_REQUIRED = {"gemm": ("BLOCK_M", "BLOCK_N", "BLOCK_K"), "flat": ("BLOCK_M", "BLOCK_N", "BLOCK_K"),
             "direct": ("BLOCK_M", "BLOCK_N"), "packed": ("BLOCK_M", "BLOCK_N"),
             "grad": ("BLOCK_M", "BLOCK_N"), "span": ("BLOCK_M", "BLOCK_N")}


def _log2(x: float) -> float:
    return math.log2(max(x, 1))


def _pow2_divisor(x: int) -> float:
    """Largest power of two dividing ``x`` (>= 1), capped at ``_ALIGN_CAP``."""
    x = max(int(x), 1)
    return float(min(x & -x, _ALIGN_CAP))


def alignment_vector(geom: ConvGeometry) -> np.ndarray:
    """The ``_ALIGN_NAMES`` columns (candidate-independent, the last ones of a row)."""
    return np.asarray([_pow2_divisor(v) for v in (geom.c, geom.k, geom.cg, geom.kg)],
                      dtype=np.float64)


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


# Columns of ``candidate_table``: one-hot, knobs, then what does not depend on the
# geometry: kind flags (gemm, flat, direct, packed, grad, span), BLOCK_K of the
# reduction (1 for the FMA families), tile_mn, tile_intensity,
# acc_per_thread.
_N_KNOB = len(_KNOB_NAMES)
_T_KNOB = _N_FAM
_T_KIND = _N_FAM + _N_KNOB
_T_EXTRA = _T_KIND + len(_KINDS)
_N_TABLE = _T_EXTRA + 4


@lru_cache(maxsize=8192)
def _candidate_row(family: str, config: Config) -> tuple[float, ...]:
    """One ``candidate_table`` row (absent knob: 0; absent SPLIT_K, GROUP_M: 1)."""
    knobless = family in _KNOBLESS
    family = FEATURE_FAMILY.get(family, family)
    if family not in FAMILY_KIND:
        raise ValueError(f"unknown kernel family {family!r}: feature schema v{SCHEMA_VERSION} "
                         f"knows {FAMILY_NAMES}")
    kind = FAMILY_KIND[family]
    cfg = dict.fromkeys(_REQUIRED[kind], 1) if knobless else dict(config)
    missing = [k for k in _REQUIRED[kind] if k not in cfg]
    if missing:
        raise ValueError(f"config {config!r} of family {family!r} lacks {missing}")
    onehot = tuple(float(family == f) for f in FAMILY_NAMES)
    knobs = tuple(float(cfg.get(k, 1 if k in ("SPLIT_K", "GROUP_M") else 0))
                  for k in _KNOB_NAMES)
    flags = tuple(float(kind == k) for k in _KINDS)
    bm, bn, bk, warps = (float(cfg.get(k, 0)) for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K",
                                                          "num_warps"))
    bk_eff = 1.0 if kind in ("direct", "span") else max(bk, 1.0)  # grad: BLOCK_K or 1 (FMA)
    extra = (bk_eff, bm * bn, bm * bn / (bm + bn), bm * bn / (32.0 * max(warps, 1.0)))
    return (*onehot, *knobs, *flags, *extra)


# Rows of candidates seen so far: candidate_table is a dict look-up per candidate and
# one numpy gather. Rows are only added (under the lock; the table before the index,
# so a reader never sees an index past the table).
_ROW_OF: dict[tuple[str, Config], int] = {}
_TABLE = np.empty((0, _N_TABLE))
_TABLE_LOCK = threading.Lock()
_TABLE_MAX = 1 << 16  # distinct candidates kept; past it rows are built per call


def _add_rows(candidates: Sequence[Candidate]) -> bool:
    """Add the rows of ``candidates`` not in the table yet; False when it is full."""
    global _TABLE
    new = {}
    for c in candidates:
        key = (c.family, c.config)
        if key not in _ROW_OF and key not in new:
            new[key] = _candidate_row(c.family, c.config)  # validates
    with _TABLE_LOCK:
        new = {k: row for k, row in new.items() if k not in _ROW_OF}
        if len(_ROW_OF) + len(new) > _TABLE_MAX:
            return False
        if new:
            base = len(_TABLE)
            _TABLE = np.vstack([_TABLE, np.array(list(new.values()), dtype=np.float64)])
            _ROW_OF.update((k, base + i) for i, k in enumerate(new))
    return True


def candidate_table(candidates: Sequence[Candidate]) -> np.ndarray:
    """[n, _N_TABLE] float64: the geometry-independent part of each candidate's features."""
    try:
        ids = [_ROW_OF.get((c.family, c.config)) for c in candidates]
        if None in ids:
            if not _add_rows(candidates):  # table full: build these rows directly
                return np.array([_candidate_row(c.family, c.config) for c in candidates],
                                dtype=np.float64).reshape(len(ids), _N_TABLE)
            ids = [_ROW_OF[(c.family, c.config)] for c in candidates]
    except (AttributeError, TypeError):
        bad = next((c for c in candidates if not isinstance(c, Candidate)), None)
        if bad is None:
            raise
        raise TypeError(f"expected Candidate objects, got {type(bad).__name__}") from None
    return _TABLE[ids]


def feature_matrix(geom: ConvGeometry, candidates: Sequence[Candidate],
                   device: DeviceSpec) -> np.ndarray:
    """float32 [len(candidates), N_FEATURES] features, columns in ``FEATURE_NAMES`` order."""
    if not isinstance(geom, ConvGeometry):
        raise TypeError(f"geom must be a ConvGeometry, got {type(geom).__name__}")
    if not isinstance(device, DeviceSpec):
        raise TypeError(f"device must be a DeviceSpec, got {type(device).__name__}")
    tab = candidate_table(candidates)
    if len(candidates) and FAMILY_DIRECTION[candidates[0].family] == "forward":
        geom = trim_dead_taps(geom)  # the geometry a forward kernel runs (dispatcher.launch)
    out = np.empty((tab.shape[0], N_FEATURES), dtype=np.float64)
    out[:, :_N_GEOM] = geometry_vector(geom, device)
    d = _N_GEOM + _N_FAM + _N_KNOB
    out[:, _N_GEOM:d] = tab[:, :_T_KIND]
    # (by name: a knob added to _KNOB_NAMES shifts no other)
    knob = dict(zip(_KNOB_NAMES, tab[:, _T_KNOB:_T_KIND].T))
    bm, bn, bk, split, stages, tile_w, walks = (knob[k] for k in (
        "BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K", "num_stages", "TILE_W", "ITEMS"))
    gemm, flat, direct, packed, grad, span = tab[:, _T_KIND:_T_EXTRA].T
    bk_eff, tile_mn, tile_int, acc = tab[:, _T_EXTRA:].T

    # Per-kind sizes as blends of 0/1 flags (one pass each, no branches).
    m = float(max(geom.gemm_m, 1))
    trs, cg, g = float(geom.t * geom.r * geom.s), float(geom.cg), float(geom.g)
    k_true = float(max(geom.gemm_k, 1))
    n_dim = geom.k + gemm * (geom.kg - geom.k)  # gemm: per group; else all channels
    groups = 1.0 + gemm * (g - 1.0)
    # Whole groups one packed program covers (>= 1 so that infeasible rows stay finite).
    gpt = np.clip(np.floor(bn / float(max(geom.kg, 1))), 1.0, g)
    # Reduction a program walks: mult x ceil(run / BLOCK_K) steps, padded to its K tile;
    # flat reduces over all of (t, r, s, c), packed over its groups' channels.
    run = cg + flat * (k_true - cg) + packed * (gpt - 1.0) * cg
    k_steps = (trs + flat * (1.0 - trs)) * np.ceil(run / bk_eff)
    # grouped_packed's BLOCK_K of whole taps: steps of taps_per_step taps. (Configs no
    # earlier model was offered: no feature value of an earlier row changes, so the schema
    # stays.)
    for i, cand in enumerate(candidates):
        if cand.family == "grouped_packed":
            bn_i, bk_i = cand.config["BLOCK_N"], cand.config["BLOCK_K"]
            if taps_per_step(geom, bn_i, bk_i) > 1:
                k_steps[i] = packed_iters(geom, bn_i, bk_i)
    k_padded = k_steps * bk_eff
    # A program's pixels: a TILE_H x TILE_W block of one image, or a flat run of BLOCK_M
    # pixels (about BLOCK_M / OW rows of up to OW pixels).
    od, oh, ow = (float(v) for v in geom.out_spatial)
    tiled = tile_w > 0
    tw = np.where(tiled, tile_w, np.minimum(bm, ow))
    th = np.where(tiled, bm / np.maximum(tile_w, 1.0), np.ceil(bm / ow))
    # The TMA box families' boxes may hold several images of fewer rows (box_images).
    boxes = np.ones((len(candidates), 2))
    for i, cand in enumerate(candidates):
        if cand.family in _BOX_FAMILIES:
            boxes[i] = box_images(geom.n, int(oh), cand.config["BLOCK_M"], cand.config["TILE_W"])
            th[i] = boxes[i, 0]
    images = boxes[:, 1]
    tiles_m = np.where(tiled, np.ceil(geom.n / images) * od * np.ceil(oh / th) * np.ceil(ow / tw),
                       np.ceil(m / bm))
    for i, cand in enumerate(candidates):
        if cand.family in _ITEM_FAMILIES:  # items of whole grid rows (kernels/flat_grid.py)
            tiles_m[i] = _ITEM_FAMILIES[cand.family].items(geom, cand.config)
    # span: BLOCK_M rows x BLOCK_N / K pixels (all channels); as pixel tiles, with every
    # channel in one "channel tile" of BLOCK_N / (pixels a span) = K.
    if span.any():
        kf = float(max(geom.k, 1))
        spans = np.ceil(ow * kf / np.maximum(bn, 1.0))
        tw = np.where(span > 0, np.maximum(bn / kf, 1.0), tw)
        th = np.where(span > 0, bm, th)
        tiles_m = np.where(span > 0, geom.n * od * np.ceil(oh / np.maximum(bm, 1.0)) * spans,
                           tiles_m)
        bm = np.where(span > 0, bm * bn / kf, bm)
        bn = np.where(span > 0, kf, bn)
    # Input pixels a program reads per output pixel it writes (halo of the filter window).
    (_, st_h, st_w), (_, dl_h, dl_w) = geom.stride, geom.dilation
    span_h = (th - 1) * st_h + (geom.r - 1) * dl_h + 1
    span_w = (tw - 1) * st_w + (geom.s - 1) * dl_w + 1
    halo = span_h * span_w / (th * tw)
    tiles_n = np.where(packed > 0, np.ceil(g / gpt), np.ceil(np.maximum(n_dim, 1.0) / bn))
    programs = np.ceil(tiles_m / np.maximum(walks, 1.0)) * tiles_n * groups * split
    sms = float(max(device.sm_count, 1))
    waves = programs / sms
    waves_ceil = np.ceil(waves)

    out[:, d + 0] = tiles_m
    out[:, d + 1] = tiles_n
    out[:, d + 2] = k_steps
    out[:, d + 3] = np.ceil(k_steps / split)
    out[:, d + 4] = programs
    out[:, d + 5] = np.log2(np.maximum(programs, 1.0))
    out[:, d + 6] = waves
    out[:, d + 7] = waves_ceil
    out[:, d + 8] = (programs % sms) / sms
    out[:, d + 9] = waves / np.maximum(waves_ceil, 1.0)
    out[:, d + 10] = tiles_m * bm / m - 1.0  # padding waste of the pixel tiles
    out[:, d + 11] = tiles_n * bn / np.maximum(n_dim, 1.0) - 1.0
    out[:, d + 12] = k_padded / k_true - 1.0
    out[:, d + 13] = (1.0 - direct) * stages * (bm + bn) * bk * float(geom.elem_bytes)
    out[:, d + 14] = tile_mn
    out[:, d + 15] = tile_int
    out[:, d + 16] = np.log2(np.maximum(2.0 * tile_mn * k_padded / split, 1.0))
    out[:, d + 17] = np.where(split > 1, np.log2(np.maximum(split * m * geom.k * 4.0, 1.0)), 0.0)
    out[:, d + 18] = acc
    out[:, d + 19] = halo
    out[:, d + 20:d + 24] = alignment_vector(geom)
    fam_index = tab[:, :_N_FAM].argmax(axis=1)
    view, grids = _view_columns(geom, candidates, fam_index)
    out[:, d + 24:] = view
    if grids is not None and grad.any():
        wgrad = _DIRECTION_OF_INDEX[fam_index] == DIRECTIONS.index("wgrad")
        _grad_derived(out[:, d:d + 20], grad > 0, grids, split, stages, geom.elem_bytes, sms,
                      wgrad)
    return out.astype(np.float32)


_DIRECTION_OF_INDEX = np.array([DIRECTIONS.index(FAMILY_DIRECTION[f]) for f in FAMILY_NAMES])
_GRAD_FAMILY = {f.name: f for f in FAMILIES if f.direction != "forward"}
# GradGrid fields _grad_derived reads, in this order.
_GRID_FIELDS = ("m", "n", "red", "block_m", "block_n", "tiles_m", "tiles_n", "mult", "k_steps",
                "k_block", "fma")


def _view_columns(geom: ConvGeometry, candidates: Sequence[Candidate],
                  fam_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The ``_VIEW_NAMES`` columns (direction one-hot, log2 of the M, N, reduction and
    multiplier of what the family computes: the conv's GEMM for forward families, the
    launch grid (``GradFamily.grid``) for gradient ones), and the gradient rows' grids as
    a [rows, len(_GRID_FIELDS)] array (None without gradient rows)."""
    out = np.zeros((len(fam_idx), len(_VIEW_NAMES)))
    direction = _DIRECTION_OF_INDEX[fam_idx]
    fwd = [_log2(v) for v in forward_gemm_view(geom)]
    if not direction.any():  # forward only (every dispatch of a forward conv): one view
        out[:, 0] = 1.0
        out[:, 3:] = fwd
        return out, None
    out[np.arange(len(fam_idx)), direction] = 1.0
    grids = np.zeros((len(fam_idx), len(_GRID_FIELDS)))
    for row, cand in enumerate(candidates):
        fam = _GRAD_FAMILY.get(cand.family)
        if fam is None:
            out[row, 3:] = fwd
            continue
        grid = fam.grid(geom, cand.config)
        grids[row] = [getattr(grid, f) for f in _GRID_FIELDS]
        out[row, 3:] = [_log2(v) for v in (grid.m, grid.n, grid.red, grid.mult)]
    return out, grids


def _grad_derived(derived: np.ndarray, rows: np.ndarray, grids: np.ndarray, split, stages,
                  elem_bytes: int, sms: float, wgrad: np.ndarray) -> None:
    """Overwrite ``_DERIVED_NAMES`` of the gradient families' rows with the tiles, waves,
    steps and waste of their launch grids."""
    m, n, red, bm, bn, tiles_m, tiles_n, mult, k_steps, k_block, fma = grids[rows].T
    split, stages = split[rows], stages[rows]
    # A wgrad launch leaves out the slices that would get no reduction steps.
    per_split, slices = split_steps(k_steps, split)
    split = np.where(wgrad[rows] & (k_steps > 0), slices, split)
    programs = tiles_m * tiles_n * mult * split
    waves = programs / sms
    waves_ceil = np.ceil(waves)
    sub = derived[rows]
    sub[:, 0], sub[:, 1], sub[:, 2] = tiles_m, tiles_n, k_steps
    sub[:, 3] = per_split
    sub[:, 4], sub[:, 5] = programs, np.log2(np.maximum(programs, 1.0))
    sub[:, 6], sub[:, 7] = waves, waves_ceil
    sub[:, 8] = (programs % sms) / sms
    sub[:, 9] = waves / np.maximum(waves_ceil, 1.0)
    sub[:, 10] = tiles_m * bm / np.maximum(m, 1.0) - 1.0
    sub[:, 11] = tiles_n * bn / np.maximum(n, 1.0) - 1.0
    sub[:, 12] = k_steps * k_block / np.maximum(red, 1.0) - 1.0
    sub[:, 13] = (1.0 - fma) * stages * (bm + bn) * k_block * float(elem_bytes)
    sub[:, 16] = np.log2(np.maximum(2.0 * bm * bn * k_steps * k_block / split, 1.0))
    sub[:, 17] = np.where(split > 1, np.log2(np.maximum(split * m * n * mult * 4.0, 1.0)), 0.0)
    derived[rows] = sub


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


__all__ = ["FAMILY_DIRECTION", "FAMILY_KIND", "FEATURE_FAMILY", "FAMILY_NAMES", "FORWARD_FAMILIES",
           "GRAD_FAMILIES", "FEATURE_NAMES", "N_FEATURES", "SCHEMA_VERSION",
           "alignment_vector", "candidate_table", "feature_matrix", "geometry_vector",
           "sweep_feature_matrix"]
