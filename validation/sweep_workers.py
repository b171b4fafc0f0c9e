"""Worker processes of the sweep: run tasks with a timeout, survive crashing workers.

Each worker is a spawned process holding its own CUDA context. A task is
``(kind, problem_id, geom, cand_id)`` with kind ``check`` or ``time``. A worker
that dies mid-task yields ``crashed`` for that task, one that overruns the
timeout is killed and yields ``timeout``; either way a fresh worker takes its
place and the remaining tasks go on.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections import deque
from multiprocessing.connection import wait as mp_wait

from .backends import Backend, Outcome, short_error


def worker_main(conn, backend: Backend) -> None:
    """Entry point of a worker process."""
    try:
        try:
            backend.setup()
        except Exception as e:
            conn.send(("boot_error", short_error(e)))
            return
        conn.send(("ready", None))
        while True:
            task = conn.recv()
            if task is None:
                return
            kind, problem_id, geom, cand_id = task
            try:
                if kind == "check":
                    out = backend.check(problem_id, geom, cand_id)
                else:
                    out = backend.time(problem_id, geom, cand_id)
            except Exception as e:  # a backend bug must not stop the sweep
                out = Outcome("runtime_error", error=short_error(e))
            conn.send(("result", out))
            if out.fatal:
                return
    except (KeyboardInterrupt, EOFError, BrokenPipeError):
        return


class _Worker:
    def __init__(self, ctx, backend: Backend) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker_main, args=(child, backend), daemon=True,
                                name="convdispatch-sweep-worker")
        self.proc.start()
        child.close()
        self.started = time.monotonic()
        self.ready = False
        self.task: int | None = None
        self.sent = 0.0

    def stop(self, graceful: bool = False) -> None:
        if graceful and self.proc.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.proc.join(5)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.conn.close()


class WorkerPool:
    """``size`` worker processes; ``run`` spreads tasks over up to ``parallel`` of them."""

    def __init__(self, backend: Backend, size: int, *, timeout_s: float,
                 boot_timeout_s: float = 600.0, start_method: str = "spawn") -> None:
        if size < 1:
            raise ValueError(f"a worker pool needs size >= 1, got {size}")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        self.backend = backend
        self.timeout_s = float(timeout_s)
        self.boot_timeout_s = float(boot_timeout_s)
        self._ctx = mp.get_context(start_method)
        self._workers = [_Worker(self._ctx, backend) for _ in range(size)]
        self.restarts = 0

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for w in self._workers:
            w.stop(graceful=True)
        self._workers = []

    def _replace(self, j: int) -> None:
        self._workers[j].stop()
        self._workers[j] = _Worker(self._ctx, self.backend)
        self.restarts += 1

    def _died(self, j: int, results: list) -> None:
        w = self._workers[j]
        w.proc.join(1)
        code = w.proc.exitcode
        if w.task is None and not w.ready:
            raise RuntimeError(f"a sweep worker died while starting (exit code {code})")
        if w.task is not None:
            results[w.task] = Outcome("crashed", error=f"worker process died (exit code {code})")
        self._replace(j)

    def _service(self, j: int, results: list, now: float) -> None:
        w = self._workers[j]
        if w.conn.poll():
            try:
                tag, payload = w.conn.recv()
            except (EOFError, OSError):
                self._died(j, results)
                return
            if tag == "boot_error":
                raise RuntimeError(f"a sweep worker failed to start: {payload}")
            if tag == "ready":
                w.ready = True
            elif tag == "result" and w.task is not None:
                results[w.task] = payload
                w.task = None
                if payload.fatal:
                    self._replace(j)
        elif not w.proc.is_alive():
            self._died(j, results)
        elif w.task is not None and now - w.sent > self.timeout_s:
            results[w.task] = Outcome("timeout", error=f"no result within {self.timeout_s:g} s")
            self._replace(j)
        elif not w.ready and now - w.started > self.boot_timeout_s:
            raise RuntimeError(f"a sweep worker did not start within {self.boot_timeout_s:g} s")

    def run(self, tasks: list[tuple], parallel: int | None = None) -> list[Outcome]:
        """Outcomes in task order. With ``parallel=1`` tasks run one after another."""
        active = range(min(parallel or len(self._workers), len(self._workers)))
        results: list[Outcome | None] = [None] * len(tasks)
        pending = deque(range(len(tasks)))
        while pending or any(self._workers[j].task is not None for j in active):
            now = time.monotonic()
            for j in active:
                w = self._workers[j]
                if w.ready and w.task is None and pending:
                    i = pending.popleft()
                    try:
                        w.conn.send(tasks[i])
                    except OSError:  # died while idle: not this task's fault
                        pending.appendleft(i)
                        self._replace(j)
                        continue
                    w.task, w.sent = i, now
            deadlines = []
            for j in active:
                w = self._workers[j]
                if w.task is not None:
                    deadlines.append(w.sent + self.timeout_s)
                elif not w.ready:
                    deadlines.append(w.started + self.boot_timeout_s)
            wait_s = max(0.0, min(deadlines, default=now + 1.0) - now) + 0.01
            handles = [self._workers[j].conn for j in active]
            handles += [self._workers[j].proc.sentinel for j in active]
            mp_wait(handles, timeout=wait_s)
            now = time.monotonic()
            for j in active:
                self._service(j, results, now)
        return results  # type: ignore[return-value]
