"""Sweep CSVs -> training arrays: validated rows, features, problem groups, targets.

CSV-level checks (columns, types, statuses, duplicates) are
``validation.sweep_csv.read_sweep``'s; this module adds what training needs:
a positive latency on every ok row, a parseable config, a valid geometry that is
the same on every row of a problem, and a GPU known to ``kernels/device.py``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..kernels.base import Candidate, Config
from ..kernels.device import KNOWN, DeviceSpec, device_key
from ..kernels.geometry import ConvGeometry
from ..validation.sweep_csv import read_sweep
from ..validation.sweep_schema import GEOMETRY_COLUMNS
from .features import FAMILY_DIRECTION, candidate_table, sweep_feature_matrix

_SEP = "\x1f"  # joins gpu and problem_id into one problem key


@dataclass
class Dataset:
    """Rows of one or more sweeps, sorted so that each problem's rows are contiguous."""

    rows: pd.DataFrame  # the sweep rows (all statuses), with a 'source' column
    X: np.ndarray  # [rows, features] float32
    problem: np.ndarray  # [rows] int problem index (0..n_problems-1)
    problem_keys: list[str]  # gpu + "\x1f" + problem_id, by problem index
    ok: np.ndarray  # [rows] bool
    latency: np.ndarray  # [rows] float64 microseconds, NaN unless ok
    cand_id: np.ndarray  # [rows] str "family:config", breaks score ties
    device: DeviceSpec
    gpus: list[str]
    data_sha256: str
    incomplete: list[str] = field(default_factory=list)  # problem ids left out

    @property
    def n_problems(self) -> int:
        return len(self.problem_keys)

    def problem_sets(self) -> np.ndarray:
        """The 'set' of each problem, by problem index."""
        first = np.unique(self.problem, return_index=True)[1]
        return self.rows["set"].to_numpy()[first]

    def subset(self, mask: np.ndarray) -> Dataset:
        """Rows where ``mask`` holds, problems renumbered 0..k-1 in order."""
        keep = np.flatnonzero(mask)
        old = self.problem[keep]
        uniq, new = np.unique(old, return_inverse=True)
        return Dataset(self.rows.iloc[keep].reset_index(drop=True), self.X[keep], new,
                       [self.problem_keys[i] for i in uniq], self.ok[keep], self.latency[keep],
                       self.cand_id[keep], self.device, self.gpus, self.data_sha256,
                       self.incomplete)


def data_hash(paths: Sequence[str | os.PathLike]) -> str:
    """sha256 over the input CSVs' bytes, in the order given."""
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).read_bytes())
    return h.hexdigest()


def _where(path: str, line_of_row: int) -> str:
    return f"{path}: line {line_of_row + 2} (data row {line_of_row + 1})"


def _check_rows(df: pd.DataFrame, path: str) -> None:
    """Training-specific checks; ``df`` index is the 0-based data row of ``path``."""
    lat = df["latency_us"]
    bad = (df["ok"] == 1) & ~(np.isfinite(lat) & (lat > 0))
    if bad.any():
        i = df.index[bad][0]
        raise ValueError(f"{_where(path, i)}: column 'latency_us' must be a positive number "
                         f"on an ok row, got {lat[i]!r}")
    pairs = df[["family", "config"]].drop_duplicates()
    for i, fam, cfg in zip(pairs.index, pairs["family"], pairs["config"]):
        if fam not in FAMILY_DIRECTION:
            raise ValueError(f"{_where(path, i)}: column 'family' has unknown family {fam!r}; "
                             f"known: {sorted(FAMILY_DIRECTION)}")
        try:
            candidate_table([Candidate(fam, Config.parse(cfg))])
        except ValueError as e:
            raise ValueError(f"{_where(path, i)}: column 'config': {e}") from None
    geo = df[list(GEOMETRY_COLUMNS)]
    per_problem = geo.groupby(df["problem_id"], sort=False).nunique()
    varying = per_problem[(per_problem > 1).any(axis=1)]
    if len(varying):
        pid = varying.index[0]
        cols = [c for c in GEOMETRY_COLUMNS if varying.loc[pid, c] > 1]
        raise ValueError(f"{path}: problem {pid!r} has rows with different geometry "
                         f"column(s) {cols}")
    firsts = df.groupby("problem_id", sort=False).head(1)
    for i, row in firsts.iterrows():
        try:
            ConvGeometry.from_row(row)
        except (ValueError, TypeError) as e:
            raise ValueError(f"{_where(path, i)}: invalid geometry: {e}") from None


def read_sweeps(paths: Sequence[str | os.PathLike]) -> pd.DataFrame:
    """Read and check sweep CSVs (ValueError names file, line and column)."""
    if not paths:
        raise ValueError("no sweep CSV given")
    frames = []
    for p in paths:
        df = read_sweep(p)
        if df.empty:
            raise ValueError(f"{p}: no data rows (only a header)")
        _check_rows(df, str(p))
        frames.append(df.assign(source=str(p)))
    out = pd.concat(frames, ignore_index=True)
    dup = out.duplicated(["gpu", "problem_id", "family", "config"], keep="first")
    if dup.any():
        r = out[dup].iloc[0]
        raise ValueError(f"{r['source']}: row for ({r['problem_id']}, {r['family']}, "
                         f"{r['config']}) on {r['gpu']} also appears in an earlier file")
    return out


def _device_of(gpus: list[str]) -> DeviceSpec:
    keys = sorted({device_key(g) for g in gpus})
    unknown = [k for k in keys if k not in KNOWN]
    if unknown:
        raise ValueError(f"sweep GPU(s) {unknown} are not described in kernels/device.py "
                         f"KNOWN ({sorted(KNOWN)}); add them there before training")
    if len(keys) > 1:
        raise ValueError(f"the sweeps mix GPUs {keys}: train one model per GPU")
    return KNOWN[keys[0]]


def direction_of(df: pd.DataFrame) -> str:
    """The one direction ('forward', 'dgrad', 'wgrad', 'backward') of the rows' families."""
    unknown = sorted(set(df["family"].unique()) - set(FAMILY_DIRECTION))
    if unknown:
        raise ValueError(f"unknown kernel family {unknown[0]!r} in the sweep rows; known: "
                         f"{sorted(FAMILY_DIRECTION)}")
    direction = df["family"].map(FAMILY_DIRECTION)
    found = sorted(direction.unique())
    if len(found) != 1:
        source = df["source"] if "source" in df else pd.Series("rows", index=df.index)
        parts = [f"{src}: {', '.join(sorted(d.unique()))}"
                 for src, d in direction.groupby(source, sort=True)]
        raise ValueError(f"the sweeps mix directions ({'; '.join(parts)}): train one model "
                         "per direction (forward, dgrad, wgrad, backward CSVs apart)")
    return found[0]


def incomplete_problems(df: pd.DataFrame, device: DeviceSpec, direction: str) -> list[str]:
    """Problems that lack every row of a family the registry offers them while the rows
    hold that family elsewhere: a family-limited sweep (``--families``) reached them
    before a full one did, so their best measured latency is not the oracle's."""
    from ..dispatcher import registry

    swept = set(df["family"].unique())
    out = []
    for pid, rows in df.groupby("problem_id", sort=True):
        geom = ConvGeometry.from_row(rows.iloc[0])
        offered = {c.family for c in registry.candidates(geom, device, direction)} & swept
        if offered - set(rows["family"].unique()):
            out.append(str(pid))
    return out


def build_dataset(df: pd.DataFrame, data_sha256: str = "") -> Dataset:
    """Features and targets of checked sweep rows (all statuses kept; see ``ok``).
    Problems whose rows miss a swept family the registry offers them are left out
    (``Dataset.incomplete``)."""
    if df.empty:
        raise ValueError("the sweeps hold no rows")
    direction = direction_of(df)
    gpus = sorted(df["gpu"].unique().tolist())
    device = _device_of(gpus)
    incomplete = incomplete_problems(df, device, direction)
    if incomplete:
        df = df[~df["problem_id"].isin(incomplete)]
        if df.empty:
            raise ValueError(f"every problem of the sweeps lacks rows of a family the "
                             f"registry offers it (e.g. {incomplete[0]})")
    key = df["gpu"].astype(str) + _SEP + df["problem_id"].astype(str)
    order = np.argsort(key.to_numpy(), kind="stable")
    df = df.iloc[order].reset_index(drop=True).assign(_key=key.to_numpy()[order])
    keys, problem = np.unique(df["_key"].to_numpy(), return_inverse=True)
    X = sweep_feature_matrix(df, "_key", {k: device for k in keys})
    ok = df["ok"].to_numpy() == 1
    latency = np.where(ok, df["latency_us"].to_numpy(dtype=np.float64), np.nan)
    cand_id = (df["family"].astype(str) + ":" + df["config"].astype(str)).to_numpy()
    return Dataset(df.drop(columns="_key"), X, problem.astype(np.int64), list(keys), ok,
                   latency, cand_id, device, gpus, data_sha256, incomplete)


def load_dataset(paths: Sequence[str | os.PathLike]) -> Dataset:
    """``read_sweeps`` + ``build_dataset`` + the data hash."""
    return build_dataset(read_sweeps(paths), data_hash(paths))
