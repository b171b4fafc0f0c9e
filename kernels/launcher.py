"""Kernel launches that can be recorded once and replayed with new tensors.

Families launch through ``launch_kernel`` and allocate scratch through
``workspace``. Normally both act at once; while a ``Recorder`` is active they
also note what was launched, so the dispatcher can keep the argument list and
replay it for the next call of the same signature with only the tensors swapped.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch

from .device import interpreter_enabled

# Triton's CPU interpreter patches module globals while a kernel runs, so two
# threads interpreting at once break each other; on a GPU launches need no lock.
_INTERPRETER_LOCK = threading.Lock()

_recorder: contextvars.ContextVar[Recorder | None] = contextvars.ContextVar(
    "convdispatch_recorder", default=None)
_branch: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "convdispatch_branch", default=None)


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
    branch: int | None = None  # the ``branches`` group it was launched in


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
        rec.steps.append(Step(kernel, tuple(grid), list(args), dict(kwargs),
                              branch=_branch.get()))
    _launch(kernel, grid, args, kwargs)


def _launch(kernel, grid, args, kwargs) -> None:
    if interpreter_enabled():
        with _INTERPRETER_LOCK:
            kernel[grid](*args, **kwargs)
    else:
        kernel[grid](*args, **kwargs)


# Whether ``branches`` forks side streams (a switch for measuring what they bring).
BRANCHES = True
_side_streams: dict[int, list] = {}
_streams_lock = threading.Lock()


def _streams(device: torch.device, n: int) -> list:
    """``n`` side streams of ``device``, made once and reused."""
    key = device.index if device.index is not None else torch.cuda.current_device()
    with _streams_lock:
        have = _side_streams.setdefault(key, [])
        while len(have) < n:
            have.append(torch.cuda.Stream(device=device))
        return have[:n]


class _Branch:
    """A reusable context: launches inside run on ``stream`` (None: the current one) and
    are recorded as group ``index``."""

    def __init__(self, index: int, stream) -> None:
        self.index, self.stream = index, stream
        self._entered: list = []

    def __enter__(self) -> None:
        ctx = torch.cuda.stream(self.stream) if self.stream is not None else None
        if ctx is not None:
            ctx.__enter__()
        self._entered.append((_branch.set(self.index), ctx))

    def __exit__(self, *exc) -> None:
        token, ctx = self._entered.pop()
        _branch.reset(token)
        if ctx is not None:
            ctx.__exit__(*exc)


@contextlib.contextmanager
def branches(device: torch.device, n: int) -> Iterator[list]:
    """``n`` contexts for independent groups of launches (disjoint writes): on a GPU each
    runs on its own side stream, forked from the current stream on entry and joined back
    into it on exit, so the groups' kernels overlap (inside a CUDA graph capture too:
    the fork and join become the graph's edges). Elsewhere, or with one group, they run
    in order on the current stream. Tensors made before entry are only used before the
    join, so the caching allocator's stream of each stays correct. A recorded launch
    notes its group, and ``Plan.run`` forks the same way."""
    if n < 2 or device.type != "cuda" or interpreter_enabled() or not BRANCHES:
        yield [_Branch(i, None) for i in range(n)]
        return
    main = torch.cuda.current_stream(device)
    side = _streams(device, n)
    for stream in side:
        stream.wait_stream(main)
    try:
        yield [_Branch(i, stream) for i, stream in enumerate(side)]
    finally:
        for stream in side:
            main.wait_stream(stream)


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
        steps = self.steps
        i = 0
        while i < len(steps):
            if steps[i].branch is None:
                self._replay(steps[i], tensors)
                i += 1
                continue
            # A run of steps recorded inside ``branches``: fork the same groups again.
            end = i
            while end < len(steps) and steps[end].branch is not None:
                end += 1
            groups = max(step.branch for step in steps[i:end]) + 1
            with branches(torch.device(device), groups) as contexts:
                for step in steps[i:end]:
                    with contexts[step.branch]:
                        self._replay(step, tensors)
            i = end

    @staticmethod
    def _replay(step: Step, tensors: dict[str, torch.Tensor | None]) -> None:
        args = list(step.args)
        for i, name, view in step.slots:
            args[i] = tensors[name]
            if view is not None:  # the same view of this call's tensor
                args[i] = args[i].as_strided(view[0], view[1],
                                             args[i].storage_offset() + view[2])
        _launch(step.kernel, step.grid, args, step.kwargs)
