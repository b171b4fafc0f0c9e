"""A synthetic sweep: known latency formula + noise, for tests and the predictor benchmark.

Latencies follow a roofline with wave quantisation, tile efficiency and
padding waste, so a model trained on them has something real to learn; no
GPU is involved. The candidate space is a small built-in one unless the
caller passes its own (e.g. the registry's).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ..kernels.base import Candidate, Config
from ..kernels.depthwise_span import span_grid
from ..kernels.device import KNOWN, DeviceSpec
from ..kernels.families import FAMILIES
from ..kernels.geometry import ConvGeometry
from ..kernels.grad_common import grad_estimate_us

CandidateSource = Callable[[ConvGeometry, DeviceSpec], Sequence[Candidate]]

_GEMM_TILES = ((32, 32, 32, 4, 3), (64, 64, 32, 4, 4), (64, 128, 64, 4, 3),
               (128, 64, 32, 4, 4), (128, 128, 32, 8, 4), (128, 128, 64, 8, 3),
               (256, 64, 32, 8, 4), (64, 32, 64, 4, 3))
_DIRECT_TILES = ((16, 64, 2), (32, 32, 2), (64, 64, 4), (128, 32, 4))
# (TILE_H, TILE_W, BLOCK_N, num_warps) of depthwise's 2D pixel blocks.
_DEPTHWISE_TILES = ((1, 32, 32, 2), (4, 8, 32, 2), (8, 8, 64, 4), (4, 16, 64, 8))
# (ROWS, TILE_W, BLOCK_N, num_warps) of depthwise_rows.
_DEPTHWISE_ROWS_TILES = ((4, 8, 64, 4), (8, 8, 32, 2), (2, 16, 32, 4), (16, 8, 64, 4))
# (ROWS, span, num_warps) of depthwise_span.
_DEPTHWISE_SPAN_TILES = ((4, 128, 1), (4, 512, 4), (8, 256, 2), (2, 1024, 8))
# (ROWS, TILE_W, BLOCK_N, num_warps) of grouped_rows.
_GROUPED_ROWS_TILES = ((4, 16, 16, 2), (4, 16, 32, 4), (8, 32, 16, 4))
# (BLOCK_M flat positions, BLOCK_N, ITEMS, num_warps) of grouped_flat.
_FLAT_TILES = ((64, 16, 2, 2), (128, 16, 4, 4), (64, 32, 2, 4))
_PACKED_TILES = ((64, 32, 32, 4, 3), (128, 64, 32, 4, 3), (128, 64, 64, 8, 3),
                 (256, 128, 64, 8, 3))


def builtin_candidates(geom: ConvGeometry, device: DeviceSpec) -> list[Candidate]:
    """A small candidate space shaped like the registry's (no registry needed)."""
    out = []
    gemm = [Config(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=wp, num_stages=st)
            for bm, bn, bk, wp, st in _GEMM_TILES]
    if geom.g == 1:
        out += [Candidate("implicit_gemm", c) for c in gemm]
        if geom.is_pointwise:
            out += [Candidate("pointwise", c) for c in gemm]
            if geom.stride == (1, 1, 1) and geom.layout == "channels_last":
                out += [Candidate(f, c) for f in ("pointwise_tma", "pointwise_tma_persistent")
                        for c in gemm if c["BLOCK_K"] >= 32]
        elif geom.stride == (1, 1, 1) and geom.layout == "channels_last":
            out += [Candidate(f, Config(c, TILE_W=8))
                    for f in ("implicit_gemm_tma", "implicit_gemm_tma_persistent") for c in gemm
                    if c["BLOCK_K"] >= 32 and c["BLOCK_M"] >= 64]
        if geom.c <= 8:
            out += [Candidate("stem", c) for c in gemm[:4]]
    else:
        if geom.cg >= 4:
            out += [Candidate("grouped_gemm", c) for c in gemm[:5]]
        if 2 <= geom.cg <= 32 and geom.kg <= 64:
            out += [Candidate("grouped_packed", Config(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                                       num_warps=wp, num_stages=st))
                    for bm, bn, bk, wp, st in _PACKED_TILES if bn >= geom.kg]
        if 2 <= geom.cg <= 16 and geom.kg <= 32 and geom.dims == 2:
            out += [Candidate("grouped_rows", Config(BLOCK_M=th * tw, TILE_W=tw, BLOCK_N=bn,
                                                     num_warps=wp, num_stages=1))
                    for th, tw, bn, wp in _GROUPED_ROWS_TILES if bn >= geom.kg]
        if (2 <= geom.cg <= 32 and geom.kg <= 32 and geom.dims == 2 and geom.c % 16 == 0
                and geom.layout == "channels_last" and geom.dtype != "float32"):
            out += [Candidate("grouped_flat", Config(BLOCK_M=bm, BLOCK_N=bn, ITEMS=items,
                                                     num_warps=wp, num_stages=1))
                    for bm, bn, items, wp in _FLAT_TILES if bn >= max(geom.cg, geom.kg)]
        if geom.cg == 1:
            out += [Candidate("depthwise", Config(BLOCK_M=th * tw, TILE_W=tw, BLOCK_N=bn,
                                                  num_warps=wp, num_stages=1))
                    for th, tw, bn, wp in _DEPTHWISE_TILES]
        if geom.cg == 1 and geom.dims == 2:
            out += [Candidate("depthwise_rows", Config(BLOCK_M=th * tw, TILE_W=tw, BLOCK_N=bn,
                                                       num_warps=wp, num_stages=1))
                    for th, tw, bn, wp in _DEPTHWISE_ROWS_TILES]
            if geom.layout == "channels_last":
                out += [Candidate("depthwise_span", Config(BLOCK_M=rows, BLOCK_N=span,
                                                           num_warps=wp, num_stages=1))
                        for rows, span, wp in _DEPTHWISE_SPAN_TILES]
        if geom.cg <= 16:
            out += [Candidate("grouped_direct", Config(BLOCK_M=bm, BLOCK_N=bn, num_warps=wp,
                                                       num_stages=1))
                    for bm, bn, wp in _DIRECT_TILES]
    if geom.cg >= 16:
        out += [Candidate("splitk", Config(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=64, GROUP_M=8,
                                           SPLIT_K=sk, num_warps=4, num_stages=3))
                for bm, bn in ((32, 32), (64, 64)) for sk in (2, 4, 8)]
    return out


GRAD_FAMILY = {f.name: f for f in FAMILIES if f.direction != "forward"}


def synthetic_latency_us(geom: ConvGeometry, cand: Candidate, device: DeviceSpec) -> float:
    """The 'true' latency of the synthetic world (microseconds, no noise)."""
    cfg = cand.config
    sms = max(device.sm_count, 1)
    bw = 3.0e6  # bytes per microsecond (3 TB/s)
    mem_us = geom.min_bytes / bw
    if cand.family in GRAD_FAMILY:  # gradient families: waves of their own tiles
        grid = GRAD_FAMILY[cand.family].grid(geom, cfg)
        return 1.0 + max(grad_estimate_us(grid, cfg.get("SPLIT_K", 1), sms), mem_us)
    if cand.family in ("grouped_direct", "depthwise", "depthwise_rows"):
        # 2D pixel blocks re-read less of the filter's halo: less traffic than flat runs.
        _, oh, ow = geom.out_spatial
        tw = cfg.get("TILE_W", 0)
        if tw:
            th = cfg["BLOCK_M"] // tw
            m_tiles = geom.n * geom.out_spatial[0] * math.ceil(oh / th) * math.ceil(ow / tw)
            traffic = 1.0 + (0.2 if cand.family == "depthwise_rows" else 0.4) * (geom.r - 1) / th
        else:
            m_tiles = math.ceil(geom.gemm_m / cfg["BLOCK_M"])
            traffic = 1.3 + 0.4 * (geom.r - 1)
        programs = m_tiles * math.ceil(geom.k / cfg["BLOCK_N"])
        waves = math.ceil(programs / sms)
        per_prog = cfg["BLOCK_M"] * cfg["BLOCK_N"] * geom.gemm_k * 2 / (4.0e5 * cfg["num_warps"])
        return 3.0 + max(waves * per_prog, mem_us * traffic)
    if cand.family == "depthwise_span":  # BLOCK_M rows x BLOCK_N (column, channel) values
        rows, span = cfg["BLOCK_M"], cfg["BLOCK_N"]
        programs = span_grid(geom, rows, span)[2]
        traffic = 1.0 + 0.2 * (geom.r - 1) / rows
        per_prog = rows * span * geom.gemm_k * 2 / (4.0e5 * cfg["num_warps"])
        return 3.0 + max(math.ceil(programs / sms) * per_prog, mem_us * traffic)
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg.get("BLOCK_K", 16)
    split = cfg.get("SPLIT_K", 1)
    if cand.family == "stem":
        n_dim, groups = geom.k, 1
        k_pad = math.ceil(geom.gemm_k / bk) * bk
    elif cand.family in ("grouped_packed", "grouped_rows", "grouped_flat"):
        # GPT whole groups a program; block-diagonal weights multiply zeros too.
        gpt = max(1, min(bn // geom.kg, geom.g))
        n_dim, groups = math.ceil(geom.g / gpt) * bn, 1
        k_pad = geom.t * geom.r * geom.s * math.ceil(gpt * geom.cg / bk) * bk
    else:
        n_dim, groups = geom.kg, geom.g
        k_pad = geom.t * geom.r * geom.s * math.ceil(geom.cg / bk) * bk
    programs = math.ceil(geom.gemm_m / bm) * math.ceil(n_dim / bn) * groups * split
    waves = math.ceil(programs / sms)
    # Bigger tiles reuse operands; too many accumulators per thread spill.
    eff = min(1.0, (bm * bn / (bm + bn)) / 48.0)
    if bm * bn / (32 * cfg["num_warps"]) > 128:
        eff *= 0.55
    eff *= 1.0 + 0.04 * (cfg["num_stages"] - 3)
    if geom.dtype == "float32":
        eff *= 0.45
    rate = 1.6e6 * eff  # flops per microsecond per SM at best
    per_prog = 2.0 * bm * bn * k_pad / split / rate
    lat = 4.0 + max(waves * per_prog, mem_us)
    if cand.family == "pointwise":
        lat *= 0.9
    elif cand.family.startswith("pointwise_tma"):  # no address math; a half-empty K box
        lat *= 0.8 if geom.c >= 64 else 1.2        # when C is small
    if cand.family.endswith("_persistent"):  # the store overlaps the next tile's loads
        lat *= 0.95 if waves > 2 else 1.05
    if split > 1:
        lat += 2.5 + split * geom.gemm_m * geom.k * 4 * 2 / bw
    return lat


def synthetic_problems(n_problems: int, seed: int = 0,
                       sets: Sequence[str] = ("syn_a", "syn_b", "syn_c")
                       ) -> list[tuple[str, str, str, ConvGeometry]]:
    """(problem_id, set, layer, geometry) of varied convolutions, deterministic per seed."""
    rng = np.random.default_rng(seed)
    out = []
    kinds = ("dense3", "pointwise", "dense3", "depthwise", "grouped", "stem", "dense3d")
    for i in range(n_problems):
        kind = kinds[i % len(kinds)]
        n = int(rng.choice((1, 2, 8, 32)))
        hw = int(rng.choice((7, 14, 28, 56)))
        c = int(2 ** rng.integers(4, 10))
        k = int(2 ** rng.integers(4, 10))
        dtype = str(rng.choice(("float16", "float16", "bfloat16", "float32")))
        if kind == "dense3":
            geom = ConvGeometry(n=n, c=c, k=k, h=hw, w=hw, r=3, s=3, pad=(0, 1, 1), dtype=dtype)
        elif kind == "pointwise":
            geom = ConvGeometry(n=n, c=c, k=k, h=hw, w=hw, r=1, s=1, dtype=dtype)
        elif kind == "depthwise":
            geom = ConvGeometry(n=n, c=c, k=c, g=c, h=hw, w=hw, r=3, s=3, pad=(0, 1, 1),
                                dtype=dtype)
        elif kind == "grouped":
            g = 32 if c >= 128 else 4
            geom = ConvGeometry(n=n, c=max(c, g * 4), k=max(k, g * 4), g=g, h=hw, w=hw, r=3,
                                s=3, pad=(0, 1, 1), dtype=dtype)
        elif kind == "stem":
            geom = ConvGeometry(n=n, c=3, k=64, h=4 * hw, w=4 * hw, r=7, s=7, stride=(1, 2, 2),
                                pad=(0, 3, 3), dtype=dtype)
        else:
            geom = ConvGeometry(n=1, c=c, k=k, d=8, h=hw, w=hw, t=3, r=3, s=3, pad=(1, 1, 1),
                                dims=3, dtype=dtype)
        set_name = sets[i % len(sets)]
        layer = f"{kind}{i}"
        out.append((f"{set_name}/{layer}/n{geom.n}/{geom.dtype}", set_name, layer, geom))
    return out


def synthetic_sweep(n_problems: int = 40, seed: int = 0, device: DeviceSpec | None = None,
                    candidates: CandidateSource | None = None, noise: float = 0.05,
                    fail_rate: float = 0.02,
                    sets: Sequence[str] = ("syn_a", "syn_b", "syn_c"),
                    problems: Sequence[tuple[str, str, str, ConvGeometry]] | None = None,
                    ) -> pd.DataFrame:
    """A DataFrame with the sweep CSV's columns (validation/sweep_schema.py).

    ``problems``: (problem_id, set, layer, geometry) tuples to use instead of
    ``synthetic_problems(n_problems, seed, sets)``.
    """
    from ..validation.sweep_csv import FIELDNAMES, INT_COLUMNS

    device = device or KNOWN["h100"]
    candidates = candidates or builtin_candidates
    rng = np.random.default_rng(seed + 7919)
    rows = []
    if problems is None:
        problems = synthetic_problems(n_problems, seed, sets)
    for pid, set_name, layer, geom in problems:
        base = geom.as_row()
        cands = candidates(geom, device)
        for cand in cands:
            lat = synthetic_latency_us(geom, cand, device) * math.exp(rng.normal(0.0, noise))
            fails = rng.random() < fail_rate
            row = dict(problem_id=pid, set=set_name, layer=layer, **base, family=cand.family,
                       config=str(cand.config), status="compile_error" if fails else "ok",
                       ok=0 if fails else 1, gpu=device.name, cudnn_us=round(lat * 1.1, 4),
                       error="synthetic failure" if fails else "")
            if not fails:
                row.update(rel_err=1e-4, latency_us=round(lat, 4),
                           latency_p20_us=round(lat * 0.98, 4),
                           latency_p80_us=round(lat * 1.02, 4),
                           tflops=geom.flops / lat / 1e6, gbps=geom.min_bytes / lat / 1e3,
                           compile_s=0.5)
            rows.append(row)
    df = pd.DataFrame(rows).reindex(columns=list(FIELDNAMES))
    # Integer columns this generator does not model (e.g. cuda_graph) read as 0.
    for col in INT_COLUMNS:
        df[col] = df[col].fillna(0).astype("int64")
    return df
