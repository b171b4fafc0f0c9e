"""The train/holdout split and the named sweep plans (problems with their dtypes).

Holdout = whole networks never used in training (resnext50_32x4d, sd_vae) plus
the random seeds >= 1000. A holdout problem whose shape (ignoring dtype) also
occurs in the train plan, e.g. ResNeXt's 7x7 stem that ResNet-50 shares, is
dropped from the holdout plan so the holdout measures unseen shapes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache

from .catalog import check_dtype, clear_cache, load_part, parse_random, spec_parts, unique
from .problem import Problem

TRAIN_SETS = ("resnet50", "mobilenet_v2", "vgg16", "video3d", "unet", "regnet", "resnext101",
              "random_train")
HOLDOUT_SETS = ("resnext50_32x4d", "sd_vae", "random_holdout")
SPLITS = ("train", "holdout")


def split_of(problem: Problem) -> str:
    """'train' or 'holdout': the split of the problem's set."""
    if not isinstance(problem, Problem):
        raise TypeError(f"split_of takes a Problem, got {type(problem).__name__}")
    if problem.set in TRAIN_SETS:
        return "train"
    if problem.set in HOLDOUT_SETS:
        return "holdout"
    raise ValueError(f"problem {problem.id!r}: set {problem.set!r} is in no split")


@dataclass(frozen=True)
class PlanPart:
    """Problems of ``spec`` in each of ``dtypes``; optionally only some batch sizes, the
    first ``limit``."""

    spec: str
    dtypes: tuple[str, ...] = ("float16",)
    batches: tuple[int, ...] | None = None
    limit: int | None = None

    def problems(self) -> list[Problem]:
        out = []
        for part in spec_parts(self.spec):
            for dtype in self.dtypes:
                got = [p for p in load_part(part, dtype)
                       if self.batches is None or p.geom.n in self.batches]
                out.extend(got[:self.limit])
        return out


FP16, BF16, FP32 = ("float16",), ("bfloat16",), ("float32",)

# name -> (split, parts). fp16 carries most problems; bf16 and fp32 cover one batch size
# of some networks plus their own random seeds, so their shapes differ from fp16's.
PLANS: dict[str, tuple[str, tuple[PlanPart, ...]]] = {
    "train": ("train", (
        PlanPart("resnet50,mobilenet_v2,vgg16,video3d,unet", FP16),
        PlanPart("random_train:0:40", FP16),
        PlanPart("resnet50", BF16, batches=(32,)),
        PlanPart("random_train:1:12", BF16),
        PlanPart("mobilenet_v2", FP32, batches=(32,)),
        PlanPart("random_train:2:12", FP32),
        # Added 2026-11-23 (third session): more random shapes, the set the model
        # generalised worst to.
        PlanPart("random_train:3:100", FP16),
        PlanPart("random_train:4:40", BF16),
        PlanPart("random_train:5:40", FP32),
        # Added 2026-11-23 (fifth session): grouped 3x3s of 8 and 16 channels a group from
        # a second network family; ResNeXt's are holdout and the train plan had few.
        PlanPart("regnet", FP16),
        # Added 2026-11-24 (eighteenth session): ResNeXt-101's grouped 3x3s (4 to 64
        # channels a group, batch up to 64). The train plan had no grouped layer as large
        # as ResNeXt-50's layer1 at batch 32, where the model took a 2-row grouped_rows
        # tile at 65 us over the 8-row one at 48 us.
        PlanPart("resnext101", FP16),
        PlanPart("resnext101", BF16, batches=(32,)),
    )),
    "holdout": ("holdout", (
        PlanPart("resnext50_32x4d", FP16, batches=(1, 8, 32)),
        PlanPart("sd_vae", FP16),
        PlanPart("random_holdout:1000:30", FP16),
        PlanPart("sd_vae", BF16, batches=(1,)),
        PlanPart("random_holdout:1001:10", BF16),
        PlanPart("resnext50_32x4d", FP32, batches=(8,)),
        PlanPart("random_holdout:1002:10", FP32),
    )),
    # A few small problems of each kind, to check a sweep end to end.
    "smoke": ("train", (
        PlanPart("resnet50", FP16, batches=(1,), limit=4),
        PlanPart("mobilenet_v2", FP16, batches=(1,), limit=4),
        PlanPart("video3d", FP16, batches=(1,), limit=2),
        PlanPart("resnet50", BF16 + FP32, batches=(1,), limit=2),
    )),
}


def plan_names() -> list[str]:
    return list(PLANS)


def _shape(problem: Problem) -> tuple:
    return replace(problem.geom, dtype="float32").key()


@cache
def _plan(name: str) -> tuple[Problem, ...]:
    if name not in PLANS:
        raise ValueError(f"unknown plan {name!r}; known: {list(PLANS)}")
    split, parts = PLANS[name]
    problems = unique(p for part in parts for p in part.problems())
    if split == "holdout":
        seen = {_shape(p) for p in _plan("train")}
        problems = [p for p in problems if _shape(p) not in seen]
    wrong = [p.id for p in problems if split_of(p) != split]
    if wrong:
        raise RuntimeError(f"plan {name!r} is {split!r} but holds {wrong[:3]}")
    return tuple(problems)


def clear_caches() -> None:
    """Forget parsed CSVs and plans (after the CSVs were rewritten)."""
    clear_cache()
    _plan.cache_clear()


def plan(name: str, dtypes: Sequence[str] | None = None) -> list[Problem]:
    """The problems of a named plan with its dtypes, or its shapes in each of ``dtypes``."""
    problems = list(_plan(name))
    if dtypes is None:
        return problems
    dtypes = [check_dtype(d) for d in dtypes]
    shapes = unique(p.with_dtype("float16") for p in problems)
    return unique(p.with_dtype(d) for p in shapes for d in dtypes)


def random_parts() -> dict[str, list[tuple[int, int]]]:
    """(seed, count) of every random spec in the plans, per random set, largest count per
    seed: what the frozen random CSVs hold."""
    counts: dict[tuple[str, int], int] = {}
    for _, parts in PLANS.values():
        for part in parts:
            for item in spec_parts(part.spec):
                if ":" in item:
                    name, seed, count = parse_random(item)
                    counts[name, seed] = max(count, counts.get((name, seed), 0))
    out: dict[str, list[tuple[int, int]]] = {}
    for (name, seed), count in counts.items():
        out.setdefault(name, []).append((seed, count))
    return out
