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
from collections.abc import Callable, Iterator
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
    # (arg position, tensor name, view, descriptor): view = (sizes, strides, storage offset
    # from the named tensor's) for an argument that is a view into a named tensor (a stride
    # phase of dX), else None; descriptor = ``_Recipe`` where the argument is a TMA tensor
    # descriptor over that tensor (or view), else None.
    slots: list[tuple[int, str, tuple | None, _Recipe | None]] = field(default_factory=list)
    branch: int | None = None  # the ``branches`` group it was launched in
    compiled: object = None  # what Triton compiled for the recorded launch (GPU only)
    fast: _FastLaunch | None = None


@dataclass
class Scratch:
    name: str
    shape: tuple
    dtype: torch.dtype
    strides: tuple | None = None


# Whether plans record launches that take TMA descriptors (a switch for measuring what
# that brings: off, such calls are never replayed and take the checked path every time).
DESCRIPTOR_PLANS = True


def _held(arg) -> torch.Tensor | None:
    """The tensor a launch argument is or holds (a TMA descriptor's ``base``), else None."""
    if isinstance(arg, torch.Tensor):
        return arg
    base = getattr(arg, "base", None)
    return base if isinstance(base, torch.Tensor) else None


class _Recipe:
    """How a recorded launch's TMA tensor descriptor was made, less its tensor: a
    descriptor holds its tensor's address, so a replay makes a new one over its own."""

    def __init__(self, kind: type, fields: dict) -> None:
        self.kind, self.fields = kind, fields

    @classmethod
    def of(cls, arg) -> _Recipe | None:
        """The recipe of a Triton host tensor descriptor, None for a tensor or an argument
        holding none; raises for another object holding one (a plan cannot remake it)."""
        if isinstance(arg, torch.Tensor) or _held(arg) is None:
            return None
        if not DESCRIPTOR_PLANS or not hasattr(arg, "block_shape") or not hasattr(
                arg, "__dict__"):
            raise RuntimeError(f"a recorded launch took a {type(arg).__name__} holding a "
                               "tensor, which a plan does not remake")
        return cls(type(arg), {k: v for k, v in vars(arg).items() if k != "base"})

    def over(self, base: torch.Tensor):
        """The descriptor over ``base``, or None where TMA cannot take its address (16-byte
        alignment: the recorded call's family checked it; a replay's tensor may differ).
        Made without the constructor's checks, which the recorded one passed with the
        same shape, strides and box (they took a tenth of a replay's host time)."""
        if base.data_ptr() % 16:
            return None
        desc = object.__new__(self.kind)
        vars(desc).update(self.fields)
        desc.base = base
        return desc


class Recorder:
    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.scratch: list[Scratch] = []
        self._scratch_tensors: dict[str, torch.Tensor] = {}  # they and their views rebound

    def __enter__(self) -> Recorder:
        self._token = _recorder.set(self)
        return self

    def __exit__(self, *exc) -> None:
        _recorder.reset(self._token)


def launch_kernel(kernel, grid: tuple, *args, **kwargs) -> None:
    rec = _recorder.get()
    step = None
    if rec is not None:
        step = Step(kernel, tuple(grid), list(args), dict(kwargs), branch=_branch.get())
        rec.steps.append(step)
    compiled = _launch(kernel, grid, args, kwargs)
    if step is not None:
        step.compiled = compiled


def _launch(kernel, grid, args, kwargs):
    if interpreter_enabled():
        with _INTERPRETER_LOCK:
            return kernel[grid](*args, **kwargs)
    return kernel[grid](*args, **kwargs)


def _hooked(hook) -> bool:
    """Whether a Triton launch hook would run (from 3.6 an empty ``HookChain`` is the unset
    value, before it None)."""
    return hook is not None and bool(getattr(hook, "calls", True))


def _current_stream() -> int:
    """The current CUDA stream's handle, as Triton's own launch path reads it."""
    from triton.runtime.driver import driver

    return driver.active.get_current_stream(driver.active.get_current_device())


# Whether a replayed plan launches its compiled kernels directly (a switch for measuring
# what that brings).
FAST_REPLAY = True


class _FastLaunch:
    """A recorded launch replayed without Triton's argument binding: the kernel compiled for
    the recorded call and every argument in signature order (constexprs included, as
    Triton's launcher takes them), the tensors swapped in at their positions. Triton
    specialised that kernel on whether each pointer is 16-byte aligned; a call whose
    tensors differ from the recording in that goes the usual way (``launch`` says False).
    Binding 20-40 arguments took about 100 us of host time a launch under cProfile on the
    H100 machine (validation/results/grad_overlap_h100/)."""

    def __init__(self, compiled, full: list, tensor_pos: list[int], aligned: list[bool]) -> None:
        self.compiled, self.full = compiled, full
        self.tensor_pos, self.aligned = tensor_pos, aligned

    @classmethod
    def of(cls, step: Step, recorded: list) -> _FastLaunch | None:
        """From a step and the argument list it was launched with, or None where Triton's
        own path is needed (the interpreter, a keyword Triton binds itself)."""
        from triton.compiler.compiler import CompiledKernel
        from triton.runtime.jit import JITFunction

        if not isinstance(step.compiled, CompiledKernel) or not isinstance(step.kernel,
                                                                           JITFunction):
            return None
        params = step.kernel.params
        full = []
        for i, p in enumerate(params):
            if i < len(recorded):
                full.append(recorded[i])
            elif p.name in step.kwargs:
                full.append(step.kwargs[p.name])
            elif p.has_default:
                full.append(p.default)
            else:
                return None
        if len(recorded) > len(params):
            return None
        pos = [i for i, a in enumerate(full) if _held(a) is not None]
        if any(i >= len(recorded) for i in pos):
            return None  # a tensor passed by keyword: the plan rebinds positions only
        # A descriptor's base was checked aligned when the replay made it (None: no check).
        aligned = [full[i].data_ptr() % 16 == 0 if isinstance(full[i], torch.Tensor) else None
                   for i in pos]
        for i in pos:
            full[i] = None  # no reference to the recorded call's tensors
        return cls(step.compiled, full, pos, aligned)

    def launch(self, grid: tuple, args: list) -> bool:
        """Launch with ``args`` (the step's positional arguments, tensors bound); False
        where it would not be the kernel Triton picks."""
        import triton

        rt = triton.knobs.runtime
        if _hooked(rt.launch_enter_hook) or _hooked(rt.launch_exit_hook):
            return False  # a profiler's hook wants Triton's launch metadata
        full = list(self.full)
        for i, was in zip(self.tensor_pos, self.aligned):
            t = args[i]
            if was is not None and (t.data_ptr() % 16 == 0) != was:
                return False
            full[i] = t
        k = self.compiled
        stream = _current_stream()
        k.run(grid[0], grid[1] if len(grid) > 1 else 1, grid[2] if len(grid) > 2 else 1,
              stream, k.function, k.packed_metadata, None, None, None, *full)
        return True


# Whether ``branches`` forks side streams (a switch for measuring what they bring).
BRANCHES = True
# Side streams by (pool, device index): ``branches`` and ``concurrently`` keep pools of
# their own, so a stride phase forked inside a concurrent gradient gets a stream no other
# group holds.
_side_streams: dict[tuple[str, int], list] = {}
_streams_lock = threading.Lock()


def _streams(device: torch.device, n: int, pool: str) -> list:
    """``n`` side streams of ``device`` from ``pool``, made once and reused."""
    key = (pool, device.index if device.index is not None else torch.cuda.current_device())
    with _streams_lock:
        have = _side_streams.setdefault(key, [])
        while len(have) < n:
            have.append(torch.cuda.Stream(device=device))
        return have[:n]


class _Branch:
    """A reusable context: launches inside run on ``stream`` (None: the current one) and
    are recorded as group ``index`` (None: as launches outside any group)."""

    def __init__(self, index: int | None, stream) -> None:
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
def _forked(device: torch.device, n: int, pool: str, on: bool,
            index: Callable[[int], int | None]) -> Iterator[list]:
    """``n`` contexts on side streams of ``pool`` forked from the current stream and joined
    back into it on exit; with ``on`` false, off a GPU or under the interpreter, ``n``
    contexts on the current stream."""
    if n < 2 or device.type != "cuda" or interpreter_enabled() or not on:
        yield [_Branch(index(i), None) for i in range(n)]
        return
    main = torch.cuda.current_stream(device)
    side = _streams(device, n, pool)
    forked = _marked(main)
    for stream in side:
        stream.wait_event(forked)
    try:
        yield [_Branch(index(i), stream) for i, stream in enumerate(side)]
    finally:
        for stream in side:
            main.wait_event(_marked(stream))


_events: dict[int, torch.cuda.Event] = {}


def _marked(stream) -> torch.cuda.Event:
    """An event recorded on ``stream`` now: one per stream, reused (a wait already queued
    keeps the record it was queued after), where ``wait_stream`` makes a new one a call."""
    with _streams_lock:
        ev = _events.get(stream.cuda_stream)
        if ev is None:
            ev = _events[stream.cuda_stream] = torch.cuda.Event()
    ev.record(stream)
    return ev


def branches(device: torch.device, n: int) -> contextlib.AbstractContextManager[list]:
    """``n`` contexts for independent groups of launches (disjoint writes): on a GPU each
    runs on its own side stream, forked from the current stream on entry and joined back
    into it on exit, so the groups' kernels overlap (inside a CUDA graph capture too:
    the fork and join become the graph's edges). Elsewhere, or with one group, they run
    in order on the current stream. Tensors made before entry are only used before the
    join, so the caching allocator's stream of each stays correct. A recorded launch
    notes its group, and ``Plan.run`` forks the same way."""
    return _forked(device, n, "branches", BRANCHES, lambda i: i)


def concurrently(device: torch.device, n: int) -> contextlib.AbstractContextManager[list]:
    """``n`` contexts for independent calls (the dgrad and wgrad of one backward), forked
    and joined like ``branches`` but from a pool of their own streams, and recorded as
    launches outside any group: a call's plan replays the same whether it ran alone or
    beside another. Outputs made before entry stay on the current stream's allocator."""
    return _forked(device, n, "concurrently", True, lambda i: None)


def workspace(shape: tuple, device, dtype=torch.float32,
              strides: tuple | None = None) -> torch.Tensor:
    """Scratch memory of one launch (dense; ``strides`` orders its axes in memory)."""
    t = _empty(shape, strides, device, dtype)
    rec = _recorder.get()
    if rec is not None:
        name = f"scratch{len(rec.scratch)}"
        rec.scratch.append(Scratch(name, tuple(shape), dtype, strides))
        rec._scratch_tensors[name] = t
    return t


def _empty(shape: tuple, strides: tuple | None, device, dtype) -> torch.Tensor:
    if strides is None:
        return torch.empty(shape, device=device, dtype=dtype)
    return torch.empty_strided(shape, strides, device=device, dtype=dtype)


class Plan:
    """Recorded launches of one call signature; ``run`` swaps in a new call's tensors."""

    def __init__(self, rec: Recorder, named: dict[str, torch.Tensor | None]) -> None:
        # Tensor id -> name (None where one object has two names: 3D calls pass their
        # tensors as they are, so conv3d(x, w, residual=x) names x twice, and a later call
        # of the same signature may pass two tensors); storage -> the named and scratch
        # tensors on it, for arguments that are views (dX's stride phases, a phase's filter
        # taps, a TMA matrix view).
        by_id: dict[int, str | None] = {}
        on_storage: dict[int, list[tuple[str, torch.Tensor]]] = {}
        known = [(n, t) for n, t in named.items() if t is not None]
        for name, t in known + list(rec._scratch_tensors.items()):
            by_id[id(t)] = name if by_id.get(id(t), name) == name else None
            on_storage.setdefault(t.untyped_storage().data_ptr(), []).append((name, t))
        self.scratch = rec.scratch
        self.steps = rec.steps
        for step in self.steps:
            step.fast = _FastLaunch.of(step, step.args)  # None under the interpreter
            step.compiled = None
            for i, a in enumerate(step.args):
                t = _held(a)
                if t is not None:
                    step.slots.append((i, *_owner(t, by_id, on_storage), _Recipe.of(a)))
                    step.args[i] = None  # hold no reference to the first call's tensors
        rec._scratch_tensors.clear()

    def run(self, tensors: dict[str, torch.Tensor | None], device) -> bool:
        """Launch the recorded steps on ``tensors``; False, having launched nothing, where
        a TMA descriptor cannot be made over this call's tensors (an unaligned address):
        the caller then takes the checked path, whose family picks its pointer kernel."""
        for s in self.scratch:
            tensors[s.name] = _empty(s.shape, s.strides, device, s.dtype)
        steps = self.steps
        bound = []
        for step in steps:
            args = self._bind(step, tensors)
            if args is None:
                return False
            bound.append(args)
        i = 0
        while i < len(steps):
            if steps[i].branch is None:
                self._replay(steps[i], bound[i])
                i += 1
                continue
            # A run of steps recorded inside ``branches``: fork the same groups again.
            end = i
            while end < len(steps) and steps[end].branch is not None:
                end += 1
            groups = max(step.branch for step in steps[i:end]) + 1
            with branches(torch.device(device), groups) as contexts:
                for j in range(i, end):
                    with contexts[steps[j].branch]:
                        self._replay(steps[j], bound[j])
            i = end
        return True

    @staticmethod
    def _bind(step: Step, tensors: dict[str, torch.Tensor | None]) -> list | None:
        """The step's arguments with this call's tensors (views, descriptors) in their
        slots; None where a descriptor cannot be made."""
        args = list(step.args)
        for i, name, view, recipe in step.slots:
            t = tensors[name]
            if view is not None:  # the same view of this call's tensor
                t = t.as_strided(view[0], view[1], t.storage_offset() + view[2])
            if recipe is not None:
                t = recipe.over(t)
                if t is None:
                    return None
            args[i] = t
        return args

    @staticmethod
    def _replay(step: Step, args: list) -> None:
        if step.fast is None or not FAST_REPLAY or not step.fast.launch(step.grid, args):
            _launch(step.kernel, step.grid, args, step.kwargs)


def _owner(t: torch.Tensor, by_id: dict, on_storage: dict) -> tuple[str, tuple | None]:
    """(name, view) of a launch argument: the named or scratch tensor it is, or the one
    whose memory holds it and the view that makes it (sizes, strides, storage offset from
    that tensor's). Raises where no single tensor does (two names on one object, or on
    memory both reach), as then a replay could read or write the wrong one."""
    if id(t) in by_id:
        name = by_id[id(t)]
        if name is None:
            raise RuntimeError("a recorded launch took a tensor that two names share")
        return name, None
    lo, end = _reach(t)
    holders = {}
    for name, base in on_storage.get(t.untyped_storage().data_ptr(), ()):
        first, last = _reach(base)
        if base.element_size() == t.element_size() and first <= lo and end <= last:
            holders[name] = base
    if len(holders) != 1:
        raise RuntimeError("a recorded launch took a tensor the plan cannot rebind")
    ((name, base),) = holders.items()
    return name, (tuple(t.shape), t.stride(), t.storage_offset() - base.storage_offset())


def _reach(t: torch.Tensor) -> tuple[int, int]:
    """The bytes [first, end) of its storage that ``t`` addresses."""
    item = t.element_size()
    first = t.storage_offset() * item
    if t.numel() == 0:
        return first, first
    return first, first + (1 + sum((n - 1) * st for n, st in zip(t.shape, t.stride()))) * item
