"""Convolution problem sets from real networks and a seeded generator, with the
train/holdout split and the named sweep plans. See data/README.md."""

from __future__ import annotations

from collections.abc import Sequence

from .catalog import SET_NAMES, list_sets, load_set, load_sets, spec_parts, unique
from .plans import HOLDOUT_SETS, PLANS, TRAIN_SETS, plan, plan_names, split_of
from .problem import MAX_FLOPS, MAX_TENSOR_BYTES, Problem, within_caps
from .random_gen import random_problems


def load_problems(spec: str, dtypes: Sequence[str] | str | None = None) -> list[Problem]:
    """Problems of a comma list of set names, plan names ('train', 'holdout', 'smoke'),
    'random_train:SEED:COUNT' / 'random_holdout:SEED:COUNT' items and problem ids
    ('SET/LAYER/nN/DTYPE', which keep their own dtype).

    ``dtypes`` (a sequence or a comma list) expands every problem per dtype; by
    default sets are float16 and plans keep their own dtypes. Each id appears once.
    """
    if isinstance(dtypes, str):
        dtypes = spec_parts(dtypes)
    elif dtypes is not None:
        dtypes = list(dtypes)
        if not dtypes:
            raise ValueError("dtypes must name at least one dtype (or be None)")
    out: list[Problem] = []
    for part in spec_parts(spec):
        if part in PLANS:
            out.extend(plan(part, dtypes))
        elif "/" in part:
            out.append(problem_by_id(part))
        elif ":" not in part and part not in SET_NAMES:
            raise ValueError(f"unknown problem set or plan {part!r} in spec {spec!r}; sets: "
                             f"{list(SET_NAMES)}, plans: {plan_names()}, or "
                             "'random_train:SEED:COUNT'")
        else:
            out.extend(load_sets([part], dtypes or ["float16"]))
    return unique(out)


def problem_by_id(pid: str) -> Problem:
    """The problem whose id is ``pid`` ('SET/LAYER/nN/DTYPE'), read from its set."""
    parts = pid.split("/")
    if len(parts) < 3:
        raise ValueError(f"problem id {pid!r} is not 'SET/LAYER/nN/DTYPE'")
    for p in load_problems(parts[0], parts[-1]):
        if p.id == pid:
            return p
    raise ValueError(f"no problem {pid!r} in set {parts[0]!r}")


__all__ = [
    "HOLDOUT_SETS", "MAX_FLOPS", "MAX_TENSOR_BYTES", "PLANS", "Problem", "TRAIN_SETS",
    "list_sets", "load_problems", "load_set", "plan", "plan_names", "problem_by_id",
    "random_problems", "split_of", "within_caps",
]
