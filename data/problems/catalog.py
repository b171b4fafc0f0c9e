"""The problem sets on disk (one CSV each) and the spec strings that select them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from ...kernels.geometry import DTYPES
from .csvio import read_problems
from .networks import NETWORK_SETS
from .problem import Problem
from .random_gen import random_problems, set_of_seed

PROBLEM_DIR = Path(__file__).resolve().parent
RANDOM_SETS = ("random_train", "random_holdout")
SET_NAMES: tuple[str, ...] = (*NETWORK_SETS, *RANDOM_SETS)


def list_sets() -> list[str]:
    """Names of the problem sets, networks first, then the frozen random sets."""
    return list(SET_NAMES)


def csv_path(name: str) -> Path:
    if name not in SET_NAMES:
        raise ValueError(f"unknown problem set {name!r}; known: {list(SET_NAMES)}")
    return PROBLEM_DIR / f"{name}.csv"


@cache
def _read_set(name: str) -> tuple[Problem, ...]:
    return tuple(read_problems(csv_path(name), expect_set=name))


def clear_cache() -> None:
    """Forget the parsed CSVs (after they were rewritten)."""
    _read_set.cache_clear()


def check_dtype(dtype: str) -> str:
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    return dtype


def load_set(name: str, dtype: str = "float16") -> list[Problem]:
    """Every problem of a set (layers x batch sizes) in ``dtype``."""
    check_dtype(dtype)
    return [p if p.geom.dtype == dtype else p.with_dtype(dtype) for p in _read_set(name)]


def parse_random(part: str) -> tuple[str, int, int]:
    """'random_train:SEED:COUNT' -> (set, seed, count); the seed must belong to that set."""
    fields = part.split(":")
    if len(fields) != 3 or fields[0] not in RANDOM_SETS or not fields[1].isdigit() \
            or not fields[2].isdigit():
        raise ValueError(f"bad random spec {part!r}: expected 'random_train:SEED:COUNT' or "
                         "'random_holdout:SEED:COUNT' with non-negative integers")
    name, seed, count = fields[0], int(fields[1]), int(fields[2])
    if set_of_seed(seed) != name:
        raise ValueError(f"bad random spec {part!r}: seed {seed} belongs to "
                         f"{set_of_seed(seed)!r} (seeds >= 1000 are reserved for the holdout)")
    return name, seed, count


def spec_parts(spec: str) -> list[str]:
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"problem spec must be a non-empty string, got {spec!r}")
    return [p.strip() for p in spec.split(",") if p.strip()]


def load_part(part: str, dtype: str) -> list[Problem]:
    """Problems of one spec item: a set name or 'random_<split>:SEED:COUNT'."""
    if ":" in part:
        _, seed, count = parse_random(part)
        return random_problems(seed, count, check_dtype(dtype))
    return load_set(part, dtype)


def unique(problems: Iterable[Problem]) -> list[Problem]:
    """Problems in order, each id once."""
    seen: set[str] = set()
    out = []
    for p in problems:
        if p.id not in seen:
            seen.add(p.id)
            out.append(p)
    return out


def load_sets(parts: Sequence[str], dtypes: Sequence[str]) -> list[Problem]:
    return unique(p for part in parts for dtype in dtypes for p in load_part(part, dtype))
