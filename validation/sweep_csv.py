"""Reading (validated) and appending (durably) sweep CSVs; columns from sweep_schema."""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from ..kernels.dead_taps import has_dead_taps
from ..kernels.geometry import ConvGeometry
from .sweep_schema import COLUMNS, KEY_COLUMNS, STATUSES

FIELDNAMES = list(COLUMNS)
INT_COLUMNS = [c for c, (t, _) in COLUMNS.items() if t == "int"]
FLOAT_COLUMNS = [c for c, (t, _) in COLUMNS.items() if t == "float"]
# String columns that may not be empty.
NONEMPTY_COLUMNS = ["problem_id", "set", "layer", "dtype", "layout", "family", "status", "gpu"]


def _where(path, i: int) -> str:
    """Data row i (0-based) sits on file line i + 2, after the header."""
    return f"{path}: line {i + 2} (data row {i + 1})"


def read_sweep(path: str | os.PathLike) -> pd.DataFrame:
    """Load a sweep CSV, raising ValueError naming file, line and column on bad data."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"sweep CSV {p} not found")
    try:
        raw = pd.read_csv(p, dtype=str, keep_default_na=False, na_filter=False)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{p}: empty file (no header)") from None
    except pd.errors.ParserError as e:
        raise ValueError(f"{p}: not a well-formed CSV: {e}") from None
    missing = [c for c in FIELDNAMES if c not in raw.columns]
    if missing:
        raise ValueError(f"{p}: missing column(s) {missing}")
    df = raw.copy()
    for col in NONEMPTY_COLUMNS:
        bad = raw.index[raw[col].str.strip() == ""]
        if len(bad):
            raise ValueError(f"{_where(p, bad[0])}: column {col!r} is empty")
    for col in INT_COLUMNS:
        ok = raw[col].str.fullmatch(r"\s*-?\d+\s*")
        if not ok.all():
            i = raw.index[~ok][0]
            raise ValueError(f"{_where(p, i)}: column {col!r} must be an integer, "
                             f"got {raw[col][i]!r}")
        df[col] = raw[col].astype("int64")
    for col in FLOAT_COLUMNS:
        vals = pd.to_numeric(raw[col].where(raw[col].str.strip() != "", "nan"), errors="coerce")
        bad = vals.isna() & ~raw[col].str.strip().str.lower().isin(["", "nan"])
        if bad.any():
            i = raw.index[bad][0]
            raise ValueError(f"{_where(p, i)}: column {col!r} must be a number or empty, "
                             f"got {raw[col][i]!r}")
        df[col] = vals.astype("float64")
    unknown = ~raw["status"].isin(STATUSES)
    if unknown.any():
        i = raw.index[unknown][0]
        raise ValueError(f"{_where(p, i)}: column 'status' has unknown value "
                         f"{raw['status'][i]!r}; known: {list(STATUSES)}")
    inconsistent = df["ok"] != (df["status"] == "ok").astype("int64")
    if inconsistent.any():
        i = df.index[inconsistent][0]
        raise ValueError(f"{_where(p, i)}: column 'ok' is {df['ok'][i]} but status is "
                         f"{df['status'][i]!r}")
    dup = df.duplicated(list(KEY_COLUMNS), keep=False)
    if dup.any():
        keys = df[list(KEY_COLUMNS)]
        first = keys.loc[df.index[dup][0]]
        same = df.index[(keys == first).all(axis=1)]
        raise ValueError(f"{p}: duplicate key {tuple(first.tolist())} on lines "
                         f"{[int(r) + 2 for r in same]} ({int(dup.sum())} rows have a "
                         f"duplicated {KEY_COLUMNS} in all)")
    return df


def sweep_provenance(folder: str | os.PathLike, names: Iterable[str]) -> str:
    """'NAME.csv: GPU, torch, triton, CUDA, cuDNN' of each sweep in ``folder``, from its
    sidecar, joined by '; '."""
    out = []
    for name in names:
        meta = json.loads((Path(folder) / f"{name}.meta.json").read_text())
        sw = meta["software"]
        out.append(f"{name}.csv: {meta['gpu']['name']}, torch {sw['torch']}, triton "
                   f"{sw['triton']}, CUDA {sw['cuda']}, cuDNN {sw['cudnn']}")
    return "; ".join(out)


def row_geometry(row: Mapping):
    """The ConvGeometry of a sweep row (its geometry columns; no upper padding)."""
    from ..kernels.geometry import ConvGeometry

    ints = {k: int(row[k]) for k in ("n", "c", "k", "g", "d", "h", "w", "t", "r", "s", "dims")}
    return ConvGeometry(**ints, stride=tuple(int(row[f"stride_{a}"]) for a in "dhw"),
                        pad=tuple(int(row[f"pad_{a}"]) for a in "dhw"),
                        dilation=tuple(int(row[f"dil_{a}"]) for a in "dhw"),
                        dtype=str(row["dtype"]), layout=str(row["layout"]))


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.7g}"
    return str(v)


def read_header(path: str | os.PathLike) -> list[str] | None:
    """The header of a CSV, or None when the file is missing or empty."""
    p = Path(path)
    if not p.exists() or p.stat().st_size == 0:
        return None
    with open(p, newline="") as f:
        return next(csv.reader(f), None)


def drop_partial_line(path: str | os.PathLike) -> int:
    """Cut an unterminated last line (a write torn by a kill); returns bytes removed.

    Every finished row ends with a newline, so only an unfinished one is cut.
    """
    p = Path(path)
    if not p.exists() or p.stat().st_size == 0:
        return 0
    with open(p, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        pos, block = size, 1 << 16
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            chunk = f.read(pos - start)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                keep = start + nl + 1
                break
            pos = start
        else:
            keep = 0
        if keep < size:
            f.truncate(keep)
            f.flush()
            os.fsync(f.fileno())
        return size - keep


def append_rows(path: str | os.PathLike, rows: Iterable[Mapping]) -> int:
    """Append rows (header first if the file is new), then flush and fsync.

    Rows may omit columns (written empty) but not add unknown ones. Returns the
    number of rows written.
    """
    p = Path(path)
    rows = list(rows)
    for n, row in enumerate(rows):
        extra = sorted(set(row) - set(FIELDNAMES))
        if extra:
            raise ValueError(f"row {n} for {p} has unknown column(s) {extra}")
    header = read_header(p)
    if header is not None and header != FIELDNAMES:
        raise ValueError(f"{p} has other columns than this schema: cannot append "
                         f"(missing {sorted(set(FIELDNAMES) - set(header))}, "
                         f"extra {sorted(set(header) - set(FIELDNAMES))})")
    if header is not None:
        with open(p, "rb") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":
                raise ValueError(f"{p} ends in an unfinished line; run drop_partial_line first")
    with open(p, "a", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        if header is None:
            writer.writerow(FIELDNAMES)
        for row in rows:
            writer.writerow([_cell(row.get(c)) for c in FIELDNAMES])
        f.flush()
        os.fsync(f.fileno())
    return len(rows)


def runs_row_reuse(row: Mapping) -> bool:
    """Whether a sweep row is grouped_flat's (or its dgrad twin's) with a config that runs
    the row-reuse schedule (``kernels.grouped_flat.row_reuse``) where its launch does: a
    forward call on its geometry without dead taps, the twin on a forward problem it
    launches."""
    from ..dispatcher import registry
    from ..kernels.base import Config
    from ..kernels.dead_taps import trim_dead_taps
    from ..kernels.grouped_flat import row_reuse

    if row["family"] not in ("grouped_flat", "dgrad_grouped_flat"):
        return False
    cfg = Config.parse(row["config"])
    geom = ConvGeometry.from_row(row)
    if row["family"] == "grouped_flat":
        return row_reuse(trim_dead_taps(geom), cfg)
    return any(row_reuse(tg, cfg) for tg in registry.family(row["family"]).problems(geom))


def retire_rows(path: str | os.PathLike, families: Iterable[str] = (),
                max_spread: float | None = None,
                strided_only: bool = False, dead_taps: bool = False,
                row_reuse_only: bool = False, dims: int | None = None) -> tuple[int, Path]:
    """Move rows that must be measured again from a sweep CSV to ``<name>.retired.csv``
    beside it: those of ``families`` (whose kernel changed; with ``strided_only``, only
    their rows of strided convolutions; with ``row_reuse_only``, only their rows whose
    config runs grouped_flat's row-reuse schedule: ``runs_row_reuse``; with ``dims``, only
    their rows of convolutions of that many spatial dimensions), with
    ``max_spread`` those whose timing was disturbed (P80 / P20 latency above it), and with
    ``dead_taps`` those of problems whose filter has taps that read only padding (a
    forward kernel now runs them without those taps: ``kernels/dead_taps.py``). Returns
    (rows moved, that file). The kept lines stay byte for byte; the CSV is replaced atomically after
    the moved rows are safely appended, so a kill loses no row."""
    p = Path(path)
    families = set(families)
    df = read_sweep(p)  # refuse a malformed CSV before touching it
    pick = df["family"].isin(families)
    if strided_only:
        pick &= df[["stride_d", "stride_h", "stride_w"]].gt(1).any(axis=1)
    if dims is not None:
        pick &= df["dims"].eq(dims)
    if row_reuse_only:
        pick &= pd.Series([runs_row_reuse(row._asdict()) for row in df.itertuples()],
                          index=df.index)
    if max_spread is not None:
        spread = df["latency_p80_us"] / df["latency_p20_us"]
        pick |= spread.gt(max_spread).fillna(False)
    if dead_taps:
        firsts = df.drop_duplicates("problem_id")
        trimmed = {row.problem_id for row in firsts.itertuples()
                   if has_dead_taps(ConvGeometry.from_row(row._asdict()))}
        pick |= df["problem_id"].isin(trimmed)
    with open(p, newline="") as f:
        lines = f.readlines()
    if len(lines) - 1 != len(df):
        raise ValueError(f"{p}: {len(lines) - 1} lines but {len(df)} rows (a quoted newline?)")
    moved = [ln for ln, take in zip(lines[1:], pick) if take]
    side = p.with_name(p.stem + ".retired.csv")
    if not moved:
        return 0, side
    new_side = not side.exists() or side.stat().st_size == 0
    with open(side, "a", newline="") as f:
        f.writelines(([lines[0]] if new_side else []) + moved)
        f.flush()
        os.fsync(f.fileno())
    tmp = p.with_name(p.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        f.writelines([lines[0]] + [ln for ln, take in zip(lines[1:], pick) if not take])
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, p)
    return len(moved), side
