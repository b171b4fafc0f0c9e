"""What the device probes (``validation/gpu/probe_*.py``) share: checking and timing one
candidate without stopping at the first that fails, and writing their rows."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable
from pathlib import Path

from ..kernels.base import Config

MAX_REL_ERR = 1e-2  # a probe's output within this of the reference (relative, by norm) is ok
# A launch checked in ``checked_in_workers`` passes within this (``launch_passed``).
LAUNCH_MAX_REL_ERR = 5e-2
SWEEPS = ("data/sweeps/h100/train.csv", "data/sweeps/h100/holdout.csv")


def checked_time(label: str, run: Callable[[], object], out, ref, timer,
                 timed: Callable[[], Callable[[], object]]) -> tuple[float, float] | None:
    """(median us, relative error of ``out`` against ``ref`` by norm) after ``run()``
    wrote ``out`` and ``timer`` (a ``timing.Timer``: median, p20, p80) timed the callable
    ``timed()`` makes; None, printed with ``label``, where either raised (a probe records
    what failed and goes on)."""
    try:
        run()
        err = float((out.float() - ref.to(out.device).float()).norm() / ref.float().norm())
        return timer.time(timed())[0], err
    except Exception as e:  # noqa: BLE001 - see the docstring
        print(f"{label}: {type(e).__name__}: {str(e)[:300]}", flush=True)
        return None


def write_rows(path: str | Path, rows: list[dict]) -> None:
    """The rows as one CSV (columns: the first row's keys)."""
    if not rows:
        raise ValueError(f"no rows to write to {path}: every candidate failed")
    with open(path, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)


def stream_rows(path: str | Path, batches: Iterable[list[dict]]) -> None:
    """Write each batch of rows to one CSV as it comes (columns: the first row's keys), so
    that a probe cut short keeps the rows it finished."""
    writer = None
    with open(path, "w", newline="") as f:
        for rows in batches:
            for row in rows:
                if writer is None:
                    writer = csv.DictWriter(f, fieldnames=list(row))
                    writer.writeheader()
                writer.writerow(row)
            f.flush()


def grouped_suite(dtype: str) -> list:
    """The issue-6 suite's grouped layers in ``dtype``: the flat-grid probes' layers (a
    spawned worker makes them again from the dtype)."""
    from .bench_layers import suite_layers

    return suite_layers("issue6", dtype, "grouped")


def probe_argv(argv: list[str], shard_at: int | None = 4) -> tuple[str, str, int, str]:
    """The flat probes' command line, ``OUT.csv [DTYPE [JOBS ...]]``: (out, dtype, default
    float16; jobs, default 12; the shard ``I/N`` at ``argv[shard_at]``, default and without
    one 0/1)."""
    def at(i: int | None, default: str) -> str:
        return argv[i] if i is not None and len(argv) > i else default

    return argv[1], at(2, "float16"), int(at(3, "12")), at(shard_at, "0/1")


def probe_grouped_suite(out: str, dtype: str, jobs: int, shard: str,
                        tasks_of: Callable[[int, object], list], check: Callable,
                        rows_of: Callable[[int, object, dict], list[dict]]) -> None:
    """A flat probe's run over the suite's grouped layers (``grouped_suite``) i with
    i % N == I (``shard`` "I/N"): every layer's compile tasks (``tasks_of(i, layer)``)
    checked in ``jobs`` workers (``checked_in_workers``), then each layer's rows
    (``rows_of(i, layer, checked)``) written to ``out`` as they come."""
    todo = grouped_suite(dtype)
    index, count = map(int, shard.split("/"))
    mine = [i for i in range(len(todo)) if i % count == index]
    tasks = [task for i in mine for task in tasks_of(i, todo[i])]
    print(f"{len(tasks)} compile tasks", flush=True)
    checked = checked_in_workers(check, tasks, jobs)
    stream_rows(out, (rows_of(i, todo[i], checked) for i in mine))


def fastest_configs(paths: Iterable[str | Path], pid: str, marker: str = "WGMMA=1"
                    ) -> list[str]:
    """The configs holding ``marker`` that whole-space probe CSVs (columns problem_id,
    config, on_us; call 302's, timed in float16) time on layer ``pid`` (its float16 id),
    fastest first."""
    pid16 = pid.replace("/bfloat16", "/float16")
    rows = []
    for path in paths:
        with open(path) as f:
            rows += [r for r in csv.DictReader(f)
                     if r["problem_id"] == pid16 and r["on_us"] and marker in r["config"]]
    return [r["config"] for r in sorted(rows, key=lambda r: float(r["on_us"]))]


def launch_error(key: tuple, run: Callable, ref, dtype) -> tuple:
    """``key`` + (relative error by norm against ``ref`` of what ``run(out)`` wrote into an
    output of ``dtype`` poisoned with NaN first, ""), or + (None, the error) where it raised:
    a row of ``checked_in_workers``' ``check``."""
    import torch

    from .bench_layers import rel_err

    y = torch.full_like(ref, float("nan"), dtype=dtype)
    try:
        run(y)
        if y.is_cuda:
            torch.cuda.synchronize()
        return (*key, rel_err(y, ref), "")
    except Exception as e:  # noqa: BLE001 - recorded in the row
        return (*key, None, f"{type(e).__name__}: {str(e)[:300]}")


def launch_passed(err: float | None) -> bool:
    """Whether a launch's relative error (None: it raised) passes the workers' check."""
    return err is not None and err < LAUNCH_MAX_REL_ERR


def tile_groups(candidates) -> list[tuple[str, ...]]:
    """The ids of ``candidates`` grouped by tile: every config key but ITEMS, a run-time
    argument, so that one compile (a task of ``checked_in_workers``) serves a group."""
    tiles: dict[tuple, list[str]] = {}
    for c in candidates:
        tiles.setdefault(tuple(sorted((k, v) for k, v in c.config.items() if k != "ITEMS")),
                         []).append(c.id)
    return [tuple(ids) for ids in tiles.values()]


def checked_in_workers(check: Callable, tasks: list, jobs: int,
                       timeout_s: float = 120) -> dict[tuple, tuple]:
    """Run ``check`` (a module-level function: compile, launch and check a task's configs,
    returning rows (key..., relative error or None, message)) over ``tasks`` in ``jobs``
    spawned processes, so that the timing process finds every kernel in Triton's cache.
    Returns {key: (error, message)}; prints how many failed. A task that raises is printed
    and left unchecked; a worker that aborts (a compiler assertion) or hangs (a kernel that
    never ends) never returns its task: once no task finishes in ``timeout_s`` the rest are
    left unchecked."""
    import multiprocessing as mp

    import torch

    checked: dict[tuple, tuple] = {}
    returned = raised = 0
    with torch.multiprocessing.get_context("spawn").Pool(jobs) as pool:
        results = pool.imap_unordered(check, tasks)
        for _ in tasks:
            try:
                rows = results.next(timeout=timeout_s)
            except mp.TimeoutError:
                print(f"no task finished in {timeout_s} s: stopping the checks", flush=True)
                break
            except Exception as e:  # noqa: BLE001 - a task that raised: its rows are lost
                # (StopIteration too: the pool re-raises the task's own exception here.)
                print(f"a task raised {type(e).__name__}: {str(e)[:300]}", flush=True)
                raised += 1
                continue
            returned += 1
            for *key, err, msg in rows:
                checked[tuple(key)] = (err, msg)
        pool.terminate()
    bad = [(k, v) for k, v in checked.items() if not launch_passed(v[0])]
    lost = f"; {len(tasks) - returned - raised} of {len(tasks)} tasks never returned" if (
        returned + raised < len(tasks)) else ""
    lost += f"; {raised} of {len(tasks)} tasks raised" if raised else ""
    print(f"checked {len(checked)} launches; {len(bad)} failed or wrong{lost}", flush=True)
    for k, v in bad[:20]:
        print("  ", k, v, flush=True)
    return checked


def probe_gradients(out_csv: str | Path, direction: str, pids: str,
                    candidates: Callable, label: str = "new") -> int:
    """Time, with the sweep's timer (CUDA-graph replay, L2 flushed, median), cuDNN's
    ``direction`` gradient, the shipped model's pick and the candidates of each problem
    (comma-separated ids), each checked against torch's gradient in float32; write one row
    per (problem, candidate) and print the best of the candidates (``label``) next to the
    pick. ``candidates(geom, device, chooser)`` gives (the pick, the candidates to try)."""
    import math
    from functools import partial

    import torch

    if direction not in ("dgrad", "wgrad"):
        raise ValueError(f"the probe times one gradient (dgrad or wgrad), got {direction!r}; "
                         "a backward pass's configs are swept with `convdispatch sweep "
                         "--direction backward`")

    from ..data.problems import problem_by_id
    from ..dispatcher.launch import launch_grad
    from ..dispatcher.selection import chooser_for
    from ..kernels.device import spec_of
    from .inputs import make_grad_output, make_inputs, seed_of, torch_grad
    from .timing import CudaTimer, TimingSettings, grad_fn

    torch.backends.cudnn.benchmark = True
    timer = CudaTimer(TimingSettings(warmup_ms=3, rep_ms=8))
    dev = spec_of("cuda")
    chooser = chooser_for(dev, direction)
    rows = []
    for pid in pids.split(","):
        g = problem_by_id(pid).geom
        x, w, _ = make_inputs(g, "cuda", seed_of(pid))
        dy = make_grad_output(g, "cuda", seed_of(pid))
        ref = torch_grad(g, direction, dy.float(), x.float(), w.float())
        (cudnn_us, _, _), _ = timer.measure(grad_fn(None, direction, dy, x, w, g, None))
        pick, new = candidates(g, dev, chooser)
        best, pick_us = None, math.nan
        for cand in [pick, *new]:
            out = torch.full_like(x if direction == "dgrad" else w, math.nan)
            got = checked_time(f"{pid} {cand.id}",
                               partial(launch_grad, cand, g, dy, x=x, w=w, out=out), out, ref,
                               timer, partial(grad_fn, cand, direction, dy, x, w, g, out))
            if got is None:
                continue
            us, err = got
            ok = err < MAX_REL_ERR
            rows.append(dict(problem_id=pid, candidate=cand.id, model_pick=int(cand is pick),
                             us=round(us, 3), cudnn_us=round(cudnn_us, 3), rel_err=err,
                             ok=int(ok)))
            if cand is pick:
                pick_us = us
            elif ok and (best is None or us < best[0]):
                best = (us, cand.id)
        got = (f"{label} {best[0]:.1f} (x{cudnn_us / best[0]:.2f}) {best[1]}" if best
               else f"{label} -")
        print(f"{pid}: cudnn {cudnn_us:.1f} | model {pick_us:.1f} (x{cudnn_us / pick_us:.2f}) "
              f"{pick.id} | {got}", flush=True)
    write_rows(out_csv, rows)
    return 0


def fastest_tiles(ids: set[str], family: str, count: int,
                  sweeps: Iterable[str] = SWEEPS) -> dict[str, list[tuple[Config, float]]]:
    """Each problem's ``count`` fastest (BLOCK_M, BLOCK_N, num_warps) tiles of ``family``
    in the sweep CSVs (those that exist), each with its fastest config there and that
    config's latency (us), fastest first."""
    best: dict[str, dict[tuple[int, int, int], tuple[Config, float]]] = {}
    for path in sweeps:
        if not Path(path).exists():
            continue
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if (row["problem_id"] not in ids or row["family"] != family
                        or row["status"] != "ok"):
                    continue
                cfg = Config.parse(row["config"])
                tile = (cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["num_warps"])
                us = float(row["latency_us"])
                seen = best.setdefault(row["problem_id"], {})
                if tile not in seen or us < seen[tile][1]:
                    seen[tile] = (cfg, us)
    return {pid: sorted(tiles.values(), key=lambda c: c[1])[:count]
            for pid, tiles in best.items()}
