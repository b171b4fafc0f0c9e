"""Kernel launches that can be recorded once and replayed with new tensors.

Families launch through ``launch_kernel`` and allocate scratch through
``workspace``. Normally both act at once; while a ``Recorder`` is active they
also note what was launched, so the dispatcher can keep the argument list and
replay it for the next call of the same signature with only the tensors swapped.
"""

from __future__ import annotations

import contextvars
import threading
from dataclasses import dataclass, field

import torch

from .device import interpreter_enabled

# Triton's CPU interpreter patches module globals while a kernel runs, so two
# threads interpreting at once break each other; on a GPU launches need no lock.
_INTERPRETER_LOCK = threading.Lock()

_recorder: contextvars.ContextVar[Recorder | None] = contextvars.ContextVar(
    "convdispatch_recorder", default=None)


@dataclass
class Step:
    kernel: object
    grid: tuple
    args: list
    kwargs: dict
    # (arg position, tensor name, view): view = (sizes, strides, storage offset from the
    # named tensor's) for an argument that is a view into a named tensor (a stride phase
    # of dX), else None.
    slots: list[tuple[int, str, tuple | None]] = field(default_factory=list)


@dataclass
class Scratch:
    name: str
    shape: tuple
    dtype: torch.dtype
    strides: tuple | None = None


class Recorder:
    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.scratch: list[Scratch] = []
        self._scratch_ids: dict[int, str] = {}
        self._scratch_tensors: dict[str, torch.Tensor] = {}  # views of them are rebound too

    def __enter__(self) -> Recorder:
        self._token = _recorder.set(self)
        return self

    def __exit__(self, *exc) -> None:
        _recorder.reset(self._token)


def launch_kernel(kernel, grid: tuple, *args, **kwargs) -> None:
    rec = _recorder.get()
    if rec is not None:
        rec.steps.append(Step(kernel, tuple(grid), list(args), dict(kwargs)))
    _launch(kernel, grid, args, kwargs)


def _launch(kernel, grid, args, kwargs) -> None:
    if interpreter_enabled():
        with _INTERPRETER_LOCK:
            kernel[grid](*args, **kwargs)
    else:
        kernel[grid](*args, **kwargs)


def workspace(shape: tuple, device, dtype=torch.float32,
              strides: tuple | None = None) -> torch.Tensor:
    """Scratch memory of one launch (dense; ``strides`` orders its axes in memory)."""
    t = _empty(shape, strides, device, dtype)
    rec = _recorder.get()
    if rec is not None:
        name = f"scratch{len(rec.scratch)}"
        rec.scratch.append(Scratch(name, tuple(shape), dtype, strides))
        rec._scratch_ids[id(t)] = name
        rec._scratch_tensors[name] = t
    return t


def _empty(shape: tuple, strides: tuple | None, device, dtype) -> torch.Tensor:
    if strides is None:
        return torch.empty(shape, device=device, dtype=dtype)
    return torch.empty_strided(shape, strides, device=device, dtype=dtype)


class Plan:
    """Recorded launches of one call signature; ``run`` swaps in a new call's tensors."""

    def __init__(self, rec: Recorder, named: dict[str, torch.Tensor | None]) -> None:
        by_ptr: dict[int, str] = {}
        by_storage: dict[int, tuple[str, torch.Tensor]] = {}
        for name, t in named.items():
            if t is not None:
                by_ptr[id(t)] = name
                if name in ("out", "w"):  # dX's stride phases, a phase's filter taps
                    by_storage.setdefault(t.untyped_storage().data_ptr(), (name, t))
        by_ptr.update(rec._scratch_ids)
        for name, t in rec._scratch_tensors.items():  # views of scratch
            by_storage.setdefault(t.untyped_storage().data_ptr(), (name, t))
        self.scratch = rec.scratch
        self.steps = rec.steps
        for step in self.steps:
            for i, a in enumerate(step.args):
                if isinstance(getattr(a, "base", None), torch.Tensor):
                    # A TMA descriptor holds its tensor's address: replaying it would
                    # read and write the first call's tensors.
                    raise RuntimeError("a recorded launch took a tensor descriptor")
                if isinstance(a, torch.Tensor):
                    name, view = by_ptr.get(id(a)), None
                    if name is None and a.untyped_storage().data_ptr() in by_storage:
                        name, base = by_storage[a.untyped_storage().data_ptr()]
                        view = (tuple(a.shape), a.stride(),
                                a.storage_offset() - base.storage_offset())
                    if name is None:
                        raise RuntimeError("a recorded launch took a tensor the plan cannot "
                                           "rebind")
                    step.slots.append((i, name, view))
                    step.args[i] = None  # hold no reference to the first call's tensors
        rec._scratch_tensors.clear()

    def run(self, tensors: dict[str, torch.Tensor | None], device) -> None:
        for s in self.scratch:
            tensors[s.name] = _empty(s.shape, s.strides, device, s.dtype)
        for step in self.steps:
            args = list(step.args)
            for i, name, view in step.slots:
                args[i] = tensors[name]
                if view is not None:  # the same view of this call's tensor
                    args[i] = args[i].as_strided(view[0], view[1],
                                                 args[i].storage_offset() + view[2])
            _launch(step.kernel, step.grid, args, step.kwargs)
