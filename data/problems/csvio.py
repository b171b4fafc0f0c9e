"""Reading and writing problem CSVs, with every row validated on the way in."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path

from ...kernels.geometry import DTYPES, LAYOUTS, ConvGeometry
from .problem import Problem, check_name

# The columns of ConvGeometry.as_row(), grouped per field as in the sweep CSVs.
GEOMETRY_COLUMNS: tuple[str, ...] = (
    "n", "c", "k", "g", "d", "h", "w", "t", "r", "s",
    *(f"{field}_{axis}" for field in ("stride", "pad", "dil") for axis in "dhw"),
    "dims", "dtype", "layout",
)
_STR_COLUMNS = {"dtype": DTYPES, "layout": LAYOUTS}
# ``count`` (how often the layer occurs in its network) may be left out; it defaults to 1.
COLUMNS: tuple[str, ...] = ("set", "layer", *GEOMETRY_COLUMNS, "count")
REQUIRED = COLUMNS[:-1]


def to_text(problems: Iterable[Problem]) -> str:
    """CSV text of ``problems``, one row each, in order."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for p in problems:
        row = {"set": p.set, "layer": p.layer, **p.geom.as_row(), "count": p.count}
        writer.writerow([row[c] for c in COLUMNS])
    return buf.getvalue()


def read_problems(path: str | Path, expect_set: str | None = None) -> list[Problem]:
    """Problems of a CSV; ValueError naming file, row and column for a malformed one.

    Rows are numbered from 1 after the header (row 1 is line 2 of the file).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"problem file {path} does not exist") from None
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise ValueError(f"{path}: empty file, expected a header with columns {COLUMNS}")
    header = [h.strip() for h in header]
    missing = [c for c in REQUIRED if c not in header]
    unknown = [c for c in header if c not in COLUMNS]
    if missing or unknown or len(set(header)) != len(header):
        raise ValueError(f"{path}: bad header: missing {missing}, unknown {unknown}, "
                         f"expected columns {COLUMNS}")
    out: list[Problem] = []
    first_row: dict[str, int] = {}
    for i, fields in enumerate(reader, start=1):
        if not fields:
            continue
        where = f"{path}, row {i} (line {reader.line_num})"
        if len(fields) != len(header):
            raise ValueError(f"{where}: {len(fields)} fields, the header has {len(header)}")
        row = dict(zip(header, (f.strip() for f in fields)))
        problem = _parse_row(row, where, expect_set)
        if problem.id in first_row:
            raise ValueError(f"{where}, column 'layer': problem {problem.id} repeats row "
                             f"{first_row[problem.id]}")
        first_row[problem.id] = i
        out.append(problem)
    return out


def _parse_row(row: dict[str, str], where: str, expect_set: str | None) -> Problem:
    for col in ("set", "layer"):
        try:
            check_name(col, row[col])
        except ValueError as e:
            raise ValueError(f"{where}, column {col!r}: {e}") from None
    if expect_set is not None and row["set"] != expect_set:
        raise ValueError(f"{where}, column 'set': expected {expect_set!r}, got {row['set']!r}")
    values: dict[str, object] = {}
    for col in GEOMETRY_COLUMNS + (("count",) if "count" in row else ()):
        text = row[col]
        if col in _STR_COLUMNS:
            if text not in _STR_COLUMNS[col]:
                raise ValueError(f"{where}, column {col!r}: expected one of "
                                 f"{_STR_COLUMNS[col]}, got {text!r}")
            values[col] = text
            continue
        if not text.isdigit():
            raise ValueError(f"{where}, column {col!r}: expected a non-negative integer, "
                             f"got {text!r}")
        values[col] = int(text)
    if values.get("count", 1) < 1:
        raise ValueError(f"{where}, column 'count': must be >= 1, got {values['count']}")
    if values["dims"] not in (2, 3):
        raise ValueError(f"{where}, column 'dims': must be 2 or 3, got {values['dims']}")
    try:
        geom = ConvGeometry.from_row(values)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{where}: invalid geometry in columns n..layout: {e}") from None
    return Problem.make(row["set"], row["layer"], geom, int(values.get("count", 1)))
