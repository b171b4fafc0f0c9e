"""What the sweep's worker processes run: checking and timing one candidate.

A backend is pickled into every worker (spawn), so it holds settings only;
per-process state (inputs of the current problem) lives in module globals.
``device_spec``, ``environment``, ``settings`` and ``max_parallel`` run in the
parent; ``setup``, ``check`` and ``time`` in workers.
"""

from __future__ import annotations

import hashlib
import os
import time as _time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ..kernels.device import DeviceSpec, lookup
from .sweep_meta import nvidia_smi, software_versions
from .timing import TimingSettings

if TYPE_CHECKING:
    from ..kernels.geometry import ConvGeometry


@dataclass
class Outcome:
    """Result of one task. ``fatal``: the worker's CUDA context is unusable, restart it."""

    status: str
    rel_err: float | None = None
    compile_s: float | None = None
    latency: tuple[float, float, float] | None = None
    graphed: bool = False
    error: str = ""
    fatal: bool = False


class Backend(Protocol):
    name: str

    def device_spec(self) -> DeviceSpec: ...
    def environment(self) -> dict: ...
    def settings(self) -> dict: ...
    def max_parallel(self, geom: ConvGeometry) -> int | None: ...
    def setup(self) -> None: ...
    def check(self, problem_id: str, geom: ConvGeometry, cand_id: str) -> Outcome: ...
    def time(self, problem_id: str, geom: ConvGeometry, cand_id: str | None) -> Outcome: ...


def out_of_memory(text: str) -> bool:
    """True when an error message (an exception's or an Outcome's) is CUDA running out of
    memory."""
    return "out of memory" in text


def short_error(e: BaseException, limit: int = 240) -> str:
    """One line: exception type and the first line of its message."""
    msg = " ".join(str(e).split())
    text = f"{type(e).__name__}: {msg}" if msg else type(e).__name__
    return text[:limit]


# -- the real GPU backend --------------------------------------------------------

_STATE: dict = {}  # per worker process: {"key": (role, problem_id), "tensors": tuple}


def is_compile_error(e: BaseException) -> bool:
    """Triton raises TritonError subclasses (CompilationError, OutOfResources, PTXASError)
    at the first call; MLIR pass failures surface as RuntimeErrors naming the pass manager."""
    try:
        from triton.errors import TritonError
        from triton.runtime.errors import InterpreterError
    except ImportError:  # pragma: no cover - triton layout changed
        TritonError, InterpreterError = (), ()
    if isinstance(e, TritonError) and not isinstance(e, InterpreterError):
        return True
    msg = str(e)
    return "PassManager::run failed" in msg or "ptxas" in msg.lower()


@dataclass
class CudaBackend:
    """Checks and times candidates on a CUDA GPU with triton.testing.do_bench."""

    device: str = "cuda"
    timing: TimingSettings = field(default_factory=TimingSettings)
    # Fraction of GPU memory the concurrent check workers of one problem may fill.
    memory_fraction: float = 0.6
    name: str = "cuda"
    # What the sweep measures: the forward conv or one of its gradients (dgrad, wgrad).
    direction: str = "forward"

    # parent side
    def _torch_device(self):
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("the cuda backend needs a CUDA GPU (torch.cuda.is_available() "
                               "is False); use --backend fake to exercise the harness")
        dev = torch.device(self.device)
        if dev.type != "cuda":
            raise ValueError(f"CudaBackend.device must be a CUDA device, got {self.device!r}")
        return dev

    def device_spec(self) -> DeviceSpec:
        from ..kernels.device import spec_of

        return spec_of(self._torch_device())

    def environment(self) -> dict:
        import torch

        dev = self._torch_device()
        props = torch.cuda.get_device_properties(dev)
        spec = self.device_spec()
        uuid = getattr(props, "uuid", None)
        smi = nvidia_smi(f"GPU-{uuid}" if uuid else str(dev.index or 0))
        sw = software_versions()
        sw.update(cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version())
        return {
            "gpu": {
                "name": props.name, "key": spec.key, "sm_count": props.multi_processor_count,
                "capability": list(spec.capability), "smem_bytes": spec.smem_bytes,
                "l2_bytes": spec.l2_bytes, "total_memory_bytes": int(props.total_memory),
                "driver": smi.get("driver_version") if smi else None,
                "clocks_at_start": smi,
            },
            "software": sw,
        }

    def settings(self) -> dict:
        from .inputs import REFERENCE_RULE, SEED_RULE, TOLERANCE

        return {"backend": self.name, "timing": self.timing.as_dict(),
                "tolerance": dict(TOLERANCE), "reference": REFERENCE_RULE, "seed": SEED_RULE,
                **({"direction": self.direction} if self.direction != "forward" else {})}

    def max_parallel(self, geom: ConvGeometry) -> int | None:
        """How many check workers may hold this problem at once without running out of
        memory: each holds inputs, output and a float32 (or CPU float64) reference."""
        import torch

        total = torch.cuda.get_device_properties(self._torch_device()).total_memory
        elems = geom.min_bytes // geom.elem_bytes
        need = geom.min_bytes + 3 * 4 * elems + (256 << 20)
        return max(1, int(total * self.memory_fraction // need))

    # worker side
    def setup(self) -> None:
        import torch

        dev = self._torch_device()
        if dev.index is not None:
            torch.cuda.set_device(dev)
        # Every worker computes CPU references; with torch's default of one thread per
        # core, 15 workers oversubscribe the CPU and the check phase crawls.
        torch.set_num_threads(1)
        torch.backends.cudnn.benchmark = self.timing.cudnn_benchmark
        torch.backends.cudnn.allow_tf32 = self.timing.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = self.timing.allow_tf32
        torch.ones(1, device=dev).sum().item()  # create the context now, not in a timed task

    def _tensors(self, role: str, problem_id: str, geom: ConvGeometry) -> tuple:
        """Inputs (+ reference or output buffer) of the current problem, made once per
        worker; the previous problem's tensors are freed first."""
        import torch

        from .inputs import make_inputs, memory_format, reference, seed_of

        key = (role, problem_id)
        if _STATE.get("key") != key:
            _STATE.clear()
            torch.cuda.empty_cache()
            dev = torch.device(self.device)
            x, w, b = make_inputs(geom, dev, seed_of(problem_id))
            if self.direction != "forward":
                _STATE.update(key=key, tensors=self._grad_tensors(role, problem_id, geom, x, w))
                return _STATE["tensors"]
            if role == "check":
                extra = reference(geom, x, w, b)
            else:
                shape = [geom.n, geom.k, *geom.out_spatial[3 - geom.dims:]]
                extra = torch.empty(shape, device=dev, dtype=x.dtype,
                                    memory_format=memory_format(geom))
            _STATE.update(key=key, tensors=(x, w, b, extra))
        return _STATE["tensors"]

    def _grad_tensors(self, role: str, problem_id: str, geom: ConvGeometry, x, w) -> tuple:
        """(dy, x, w, reference or output buffer) of a gradient sweep."""
        from ..dispatcher.launch import empty_grad
        from .inputs import grad_reference, make_grad_output, seed_of

        dy = make_grad_output(geom, x.device, seed_of(problem_id))
        if role == "check":
            extra = grad_reference(geom, self.direction, dy, x, w)
        else:
            extra = empty_grad(self.direction, x, w)
        return dy, x, w, extra

    def _context_dead(self) -> bool:
        import torch

        try:
            torch.cuda.synchronize()
            torch.ones(1, device=self.device).sum().item()
            return False
        except Exception:
            return True

    def _failure(self, e: BaseException, compile_s: float | None = None) -> Outcome:
        # An illegal address or launch failure poisons the context: every later CUDA call
        # in this process fails, so the worker must be replaced.
        if self._context_dead():
            return Outcome("crashed", compile_s=compile_s, error=short_error(e), fatal=True)
        if out_of_memory(str(e)):
            _STATE.clear()  # free this problem's tensors; the next task makes them again
        status = "compile_error" if is_compile_error(e) else "runtime_error"
        return Outcome(status, compile_s=compile_s, error=short_error(e))

    def check(self, problem_id: str, geom: ConvGeometry, cand_id: str) -> Outcome:
        import torch

        from ..dispatcher.launch import run_candidate, run_grad_candidate
        from ..kernels.base import Candidate
        from .inputs import rel_err, tolerance

        t0 = None
        try:
            tensors = self._tensors("check", problem_id, geom)
            ref = tensors[3]
            cand = Candidate.parse(cand_id)
            t0 = _time.perf_counter()
            if self.direction != "forward":  # tensors: dy, x, w, reference
                out = run_grad_candidate(cand, self.direction, *tensors[:3], geom)
            else:  # tensors: x, w, bias, reference
                out = run_candidate(cand, *tensors[:3], geom)
            torch.cuda.synchronize()
            compile_s = _time.perf_counter() - t0
            err = rel_err(out, ref)
        except Exception as e:
            return self._failure(e, None if t0 is None else _time.perf_counter() - t0)
        status = "ok" if err <= tolerance(geom.dtype) else "wrong"
        msg = "" if status == "ok" else f"rel_err {err:.3g} > tolerance {tolerance(geom.dtype)}"
        return Outcome(status, rel_err=err, compile_s=compile_s, error=msg)

    def time(self, problem_id: str, geom: ConvGeometry, cand_id: str | None) -> Outcome:
        from ..kernels.base import Candidate
        from .timing import CudaTimer, candidate_fn, cudnn_fn, grad_fn

        try:
            x, w, b, out = self._tensors("time", problem_id, geom)
            if self.direction != "forward":
                fn = grad_fn(Candidate.parse(cand_id) if cand_id else None, self.direction,
                             x, w, b, geom, out)  # (dy, x, w, out) in a gradient sweep
            elif cand_id is None:
                fn = cudnn_fn(geom, x, w, b)
            else:
                fn = candidate_fn(Candidate.parse(cand_id), x, w, b, geom, out)
            lat, graphed = CudaTimer(self.timing).measure(fn)
        except Exception as e:
            return self._failure(e)
        return Outcome("ok", latency=lat, graphed=graphed)


# -- a deterministic stand-in for CPU tests ------------------------------------

FAKE_FAILURES = ("compile_error", "wrong", "runtime_error", "crash_check", "crash_time",
                 "hang_check", "hang_time")


def _unit(*parts: str) -> float:
    """A stable number in [0, 1) from strings."""
    h = hashlib.sha1("|".join(parts).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2.0**64


@dataclass
class FakeBackend:
    """Deterministic latencies from a hash of (problem, candidate); no GPU needed.

    ``failures`` maps a candidate id (or ``"problem_id|candidate_id"``, or
    ``"cudnn"`` / ``"problem_id|cudnn"`` for the baseline) to one of
    FAKE_FAILURES: ``crash_*`` kills the worker process, ``hang_*`` sleeps past
    any timeout, the others return that status. ``delay_s`` sleeps in each task.
    """

    gpu: str = "h100"
    failures: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    name: str = "fake"
    direction: str = "forward"

    def __post_init__(self) -> None:
        for key, kind in self.failures.items():
            if kind not in FAKE_FAILURES:
                raise ValueError(f"unknown fake failure {kind!r} for {key!r}; "
                                 f"known: {FAKE_FAILURES}")

    def device_spec(self) -> DeviceSpec:
        return lookup(self.gpu)

    def environment(self) -> dict:
        spec = self.device_spec()
        return {
            "gpu": {"name": f"fake {spec.name}", "key": spec.key, "sm_count": spec.sm_count,
                    "capability": list(spec.capability), "smem_bytes": spec.smem_bytes,
                    "l2_bytes": spec.l2_bytes, "total_memory_bytes": None, "driver": None,
                    "clocks_at_start": None},
            "software": software_versions(),
        }

    def settings(self) -> dict:
        return {"backend": self.name, "gpu": self.gpu, "failures": dict(sorted(
            self.failures.items())),
                **({"direction": self.direction} if self.direction != "forward" else {})}

    def max_parallel(self, geom: ConvGeometry) -> int | None:
        return None

    def setup(self) -> None:
        pass

    def _kind(self, problem_id: str, cand_id: str) -> str | None:
        return self.failures.get(f"{problem_id}|{cand_id}", self.failures.get(cand_id))

    def _act(self, kind: str | None, phase: str) -> None:
        if self.delay_s:
            _time.sleep(self.delay_s)
        if kind == f"crash_{phase}":
            os._exit(77)  # like a segfault: no reply, no cleanup
        if kind == f"hang_{phase}":
            _time.sleep(3600)

    def check(self, problem_id: str, geom: ConvGeometry, cand_id: str) -> Outcome:
        kind = self._kind(problem_id, cand_id)
        self._act(kind, "check")
        u = _unit(problem_id, cand_id, "check")
        compile_s = 0.05 + u
        if kind == "compile_error":
            return Outcome("compile_error", compile_s=compile_s,
                           error="CompilationError: injected by FakeBackend")
        if kind == "runtime_error":
            return Outcome("runtime_error", compile_s=compile_s,
                           error="RuntimeError: injected by FakeBackend")
        if kind == "wrong":
            return Outcome("wrong", rel_err=0.5 + u, compile_s=compile_s,
                           error="rel_err above tolerance (injected)")
        return Outcome("ok", rel_err=1e-4 * u, compile_s=compile_s)

    def time(self, problem_id: str, geom: ConvGeometry, cand_id: str | None) -> Outcome:
        name = "cudnn" if cand_id is None else cand_id
        self._act(self._kind(problem_id, name), "time")
        med = 5.0 + 500.0 * _unit(problem_id, name)
        return Outcome("ok", latency=(med, 0.97 * med, 1.05 * med), graphed=True)
