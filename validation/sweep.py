"""The sweep: check and time every feasible (family, config) of each problem on one GPU.

Per problem, phase 1 compiles and checks every candidate in a pool of worker
processes (Triton compilation is CPU bound; its disk cache makes phase 2's
first calls cheap); phase 2 times cuDNN and the correct candidates one after
another in a single timing worker. The problem's rows are then appended and
fsynced, so an interrupted sweep loses no finished problem and a rerun of the
same command resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..dispatcher import registry
from ..kernels.base import Candidate
from ..kernels.geometry import DTYPES, ConvGeometry
from . import sweep_meta
from .backends import Backend, Outcome, out_of_memory
from .progress import Progress
from .sweep_csv import FIELDNAMES, append_rows, drop_partial_line, read_header, read_sweep
from .sweep_workers import WorkerPool


def parse_shard(text: str) -> tuple[int, int]:
    """'i/n' -> (i, n) with 0 <= i < n."""
    i, sep, n = str(text).partition("/")
    if not sep or not i.strip().isdigit() or not n.strip().isdigit():
        raise ValueError(f"shard must look like i/n (e.g. 0/4), got {text!r}")
    return check_shard((int(i), int(n)))


def check_shard(shard: tuple[int, int]) -> tuple[int, int]:
    try:
        i, n = (int(v) for v in shard)
    except (TypeError, ValueError):
        raise ValueError(f"shard must be a pair (i, n) of ints, got {shard!r}") from None
    if n < 1 or not 0 <= i < n:
        raise ValueError(f"shard {i}/{n} is invalid: need n >= 1 and 0 <= i < n")
    return i, n


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def shard_problems(problems: Sequence, shard: tuple[int, int]) -> list:
    """Problems whose position, in the order of sha1(id), is i modulo n.

    The order depends only on the ids, so every shard process agrees on it and
    the shards partition the problems; hashing spreads sets over shards.
    """
    i, n = check_shard(shard)
    ordered = sorted(problems, key=lambda p: (_hash(p.id), p.id))
    return [p for k, p in enumerate(ordered) if k % n == i]


def spread(cands: list[Candidate], limit: int | None) -> list[Candidate]:
    """At most ``limit`` candidates, evenly spaced over the registry order (every family
    keeps a share); deterministic, so a resumed run picks the same ones."""
    if limit is None or len(cands) <= limit:
        return list(cands)
    if limit < 1:
        raise ValueError(f"limit_candidates must be >= 1, got {limit}")
    if limit == 1:
        return [cands[0]]
    idx = sorted({round(k * (len(cands) - 1) / (limit - 1)) for k in range(limit)})
    return [cands[j] for j in idx]


def check_problems(problems: Sequence) -> list:
    out = list(problems)
    seen: dict[str, int] = {}
    for n, p in enumerate(out):
        for attr in ("id", "set", "layer", "geom"):
            if not hasattr(p, attr):
                raise TypeError(f"problem {n} ({p!r}) has no attribute {attr!r}")
        if not isinstance(p.geom, ConvGeometry):
            raise TypeError(f"problem {p.id!r}: geom must be a ConvGeometry, "
                            f"got {type(p.geom).__name__}")
        if not isinstance(p.id, str) or not p.id:
            raise ValueError(f"problem {n}: id must be a non-empty string, got {p.id!r}")
        if ConvGeometry.from_row(p.geom.as_row()) != p.geom:
            raise ValueError(f"problem {p.id!r}: the sweep CSV's geometry columns cannot record "
                             f"{p.geom.describe()} (pad_hi or bias); it would be read back "
                             "as another convolution")
        if p.id in seen:
            raise ValueError(f"problem id {p.id!r} occurs twice (positions {seen[p.id]} and {n})")
        seen[p.id] = n
    return out


def _norm(obj):
    """What a value looks like after a JSON round trip (tuples become lists)."""
    return json.loads(json.dumps(obj, default=str))


def _start_meta(out_csv: Path, env: dict, harness: dict, shard: tuple[int, int],
                has_rows: bool) -> dict:
    """The sidecar to continue: the existing one (after checking it matches) or a new one."""
    path = sweep_meta.sidecar_path(out_csv)
    new = _norm({"format": sweep_meta.FORMAT, "csv": out_csv.name, **env, "harness": harness,
                 "shard": list(shard), "runs": [], "summary": None})
    if not has_rows:
        return new
    if not path.exists():
        raise ValueError(f"{out_csv} already has rows but its sidecar {path} is missing, so "
                         "the GPU and harness that made them are unknown; restore the sidecar "
                         "or write to a new file")
    old = sweep_meta.read_sidecar(path)
    diffs = sweep_meta.mismatches(old, new)
    if old.get("shard") != new["shard"]:
        diffs.append(f"shard: {old.get('shard')} != {new['shard']}")
    if diffs:
        raise ValueError(f"cannot resume {out_csv}: it was made with other settings ("
                         + "; ".join(diffs) + "); write to a new file instead")
    return old


def _row(problem, cand: Candidate, gpu: str, o1: Outcome, o2: Outcome | None,
         cudnn_us: float | None) -> dict:
    geom: ConvGeometry = problem.geom
    final = o2 if (o1.status == "ok" and o2 is not None) else o1
    status = final.status
    row = {"problem_id": problem.id, "set": problem.set, "layer": str(problem.layer),
           **geom.as_row(), "family": cand.family, "config": str(cand.config),
           "status": status, "ok": int(status == "ok"), "rel_err": o1.rel_err,
           "compile_s": o1.compile_s, "cudnn_us": cudnn_us, "gpu": gpu,
           "error": final.error if status != "ok" else ""}
    if status == "ok" and final.latency is not None:
        med, p20, p80 = final.latency
        flops, nbytes = geom.flops, geom.min_bytes
        if registry.known(cand.family) and registry.direction_of(cand) == "backward":
            flops, nbytes = 2 * flops, geom.pass_bytes  # dX and dW: two convs' work
        row.update(latency_us=med, latency_p20_us=p20, latency_p80_us=p80,
                   tflops=flops / med / 1e6, gbps=nbytes / med / 1e3,
                   cuda_graph=int(final.graphed))
    else:
        row["cuda_graph"] = 0
    return row


def _done_keys(out_csv: Path) -> tuple[set, dict]:
    """Keys already in the CSV and the cuDNN time each problem already has."""
    if read_header(out_csv) is None:
        return set(), {}
    df = read_sweep(out_csv)
    keys = set(zip(df["problem_id"], df["family"], df["config"]))
    cud = df.dropna(subset=["cudnn_us"]).groupby("problem_id")["cudnn_us"].first()
    return keys, cud.to_dict()


def check_families(names: Sequence[str], direction: str | None) -> list[str]:
    """The family names a sweep is limited to: registered ones of its direction (of any
    direction with None)."""
    known = [f.name for f in registry.families(direction=direction)]
    bad = [n for n in names if n not in known]
    if not names or bad:
        kind = f"{direction} kernel" if direction else "kernel"
        raise ValueError(f"unknown {kind} famil{'ies' if len(bad) > 1 else 'y'} "
                         f"{bad or list(names)}; known: {known}")
    return list(names)


def retry_out_of_memory(checker, problem, todo: list[Candidate], first: list) -> list:
    """Checks that ran out of GPU memory, run again one at a time: with many workers each
    holding a large problem's tensors, the memory ran out for the candidate's neighbours
    (H100, batch 256), not for the candidate. A second failure stands."""
    oom = [k for k, o in enumerate(first) if o.status == "runtime_error"
           and out_of_memory(o.error)]
    if not oom:
        return first
    again = checker.run([("check", problem.id, problem.geom, todo[k].id) for k in oom],
                        parallel=1)
    out = list(first)
    for k, o in zip(oom, again):
        out[k] = o
    return out


def run_sweep(problems: Sequence, out_csv: str | Path, *, backend: Backend,
              shard: tuple[int, int] = (0, 1), jobs: int = 1,
              dtypes: Sequence[str] | None = None, limit_candidates: int | None = None,
              families: Sequence[str] | None = None, check_timeout_s: float = 600.0,
              time_timeout_s: float = 300.0,
              quiet: bool = False, command: Sequence[str] | None = None,
              start_method: str = "spawn") -> dict:
    """Sweep ``problems`` (objects with id, set, layer, geom) into ``out_csv``; resumable.

    Returns the summary also written into the sidecar ``<out>.meta.json``.
    """
    t_start = time.monotonic()
    out_csv = Path(out_csv)
    if out_csv.suffix != ".csv":
        raise ValueError(f"the sweep output must be a .csv file, got {out_csv}")
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an int >= 1, got {jobs!r}")
    if limit_candidates is not None and limit_candidates < 1:
        raise ValueError(f"limit_candidates must be >= 1, got {limit_candidates}")
    if check_timeout_s <= 0 or time_timeout_s <= 0:
        raise ValueError("timeouts must be > 0 seconds")
    shard = check_shard(shard)
    problems = check_problems(problems)
    direction = getattr(backend, "direction", "forward")
    if families is not None:
        families = check_families(families, direction)
    if dtypes is not None:
        bad = [d for d in dtypes if d not in DTYPES]
        if bad:
            raise ValueError(f"unknown dtype(s) {bad}; known: {list(DTYPES)}")
        problems = [p for p in problems if p.geom.dtype in dtypes]
    mine = shard_problems(problems, shard)

    spec = backend.device_spec()
    env = backend.environment()
    gpu = env["gpu"]["name"]
    harness = {**backend.settings(), "check_timeout_s": check_timeout_s,
               "time_timeout_s": time_timeout_s, "limit_candidates": limit_candidates,
               "columns": ",".join(FIELDNAMES)}
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    torn = drop_partial_line(out_csv)
    if torn and not quiet:
        print(f"{out_csv}: removed an unfinished last line ({torn} bytes) left by an "
              "interrupted run", file=sys.stderr)
    done_keys, cudnn_done = _done_keys(out_csv)
    meta_path = sweep_meta.sidecar_path(out_csv)
    meta = _start_meta(out_csv, env, harness, shard, bool(done_keys))

    # Plan: the candidates each problem still needs (the registry's forced path).
    plan, skipped, empty = [], 0, 0
    for p in mine:
        cands = registry.candidates(p.geom, spec, direction)
        if families is not None:
            cands = [c for c in cands if c.family in families]
        cands = spread(cands, limit_candidates)
        todo = [c for c in cands if (p.id, c.family, str(c.config)) not in done_keys]
        if not cands:
            empty += 1
        elif not todo:
            skipped += 1
        else:
            plan.append((p, todo))

    run = _norm({"start": sweep_meta.now_iso(), "end": None, "host": sweep_meta.host(),
                 "command": list(command if command is not None else sys.argv),
                 "jobs": jobs, "families": list(families) if families is not None else None,
                 "clocks_at_start": env["gpu"].get("clocks_at_start"),
                 "interrupted": None, "summary": None})
    meta["runs"].append(run)
    sweep_meta.write_sidecar(meta_path, meta)

    stats = Counter()
    compile_times: list[float] = []
    timing_s = check_s = 0.0
    interrupted = True
    progress = Progress(sum(len(t) for _, t in plan), quiet=quiet)
    pools: list[WorkerPool] = []
    try:
        if plan:
            checker = WorkerPool(backend, jobs, timeout_s=check_timeout_s,
                                 start_method=start_method)
            pools.append(checker)
            timer = WorkerPool(backend, 1, timeout_s=time_timeout_s, start_method=start_method)
            pools.append(timer)
        for p, todo in plan:
            t0 = time.monotonic()
            par = min(jobs, backend.max_parallel(p.geom) or jobs)
            first = checker.run([("check", p.id, p.geom, c.id) for c in todo], parallel=par)
            first = retry_out_of_memory(checker, p, todo, first)
            t1 = time.monotonic()
            ok = [k for k, o in enumerate(first) if o.status == "ok"]
            tasks = [("time", p.id, p.geom, todo[k].id) for k in ok]
            cudnn_us = cudnn_done.get(p.id)
            if cudnn_us is None:
                tasks.insert(0, ("time", p.id, p.geom, None))
            second = timer.run(tasks, parallel=1)
            t2 = time.monotonic()
            if cudnn_us is None:
                base = second.pop(0)
                cudnn_us = base.latency[0] if base.status == "ok" and base.latency else None
                stats["eager_timings"] += int(base.status == "ok" and not base.graphed)
            by_cand = dict(zip(ok, second))
            rows = [_row(p, c, gpu, first[k], by_cand.get(k), cudnn_us)
                    for k, c in enumerate(todo)]
            append_rows(out_csv, rows)
            stats["problems_done"] += 1
            stats["rows_written"] += len(rows)
            stats["candidates_timed"] += len(ok)
            stats.update(f"status_{r['status']}" for r in rows)
            stats["eager_timings"] += sum(r["ok"] and not r["cuda_graph"] for r in rows)
            compile_times += [o.compile_s for o in first if o.compile_s is not None]
            check_s += t1 - t0
            timing_s += t2 - t1
            progress.update(len(todo), note=p.id)
        interrupted = False
    finally:
        progress.close()
        restarts = sum(pool.restarts for pool in pools)
        summary = {
            "problems_in_shard": len(mine),
            "problems_done": stats["problems_done"],
            "problems_skipped": skipped,
            "problems_without_candidates": empty,
            "rows_written": stats["rows_written"],
            "status_counts": {k[7:]: v for k, v in sorted(stats.items())
                              if k.startswith("status_")},
            "candidates_checked": len(compile_times),
            "candidates_timed": stats["candidates_timed"],
            # timings (cuDNN included) that fell back to eager launches: no CUDA graph
            "eager_timings": stats["eager_timings"],
            "check_s": round(check_s, 3),
            "timing_s": round(timing_s, 3),
            "candidates_timed_per_s": (round(stats["candidates_timed"] / timing_s, 3)
                                       if timing_s > 0 else None),
            "compile_s_mean": (round(sum(compile_times) / len(compile_times), 4)
                               if compile_times else None),
            "worker_restarts": restarts,
            "wall_min": round((time.monotonic() - t_start) / 60.0, 3),
            "interrupted": interrupted,
        }
        run.update(end=sweep_meta.now_iso(), interrupted=interrupted, summary=summary)
        meta["summary"] = summary
        sweep_meta.write_sidecar(meta_path, meta)
        if not quiet:
            print(format_summary(summary, out_csv), file=sys.stderr)
        # Closed after the record is written: under `timeout -s INT` the workers get the
        # signal too, and a pool that fails to close must not cost the run its summary.
        for pool in pools:
            try:
                pool.close()
            except (Exception, KeyboardInterrupt) as e:
                print(f"sweep: closing a worker pool failed: {type(e).__name__}: {e}",
                      file=sys.stderr)
    return summary


def format_summary(summary: dict, out_csv: Path | str) -> str:
    s = summary
    rate = s["candidates_timed_per_s"]
    comp = s["compile_s_mean"]
    return (f"sweep -> {out_csv}{' (STOPPED EARLY: rerun to resume)' if s['interrupted'] else ''}\n"
            f"  problems: {s['problems_done']} done, {s['problems_skipped']} already complete, "
            f"{s['problems_without_candidates']} without candidates, "
            f"{s['problems_in_shard']} in shard\n"
            f"  rows written: {s['rows_written']}  statuses: {s['status_counts']}\n"
            f"  timed {s['candidates_timed']} candidates at "
            f"{'-' if rate is None else f'{rate:.2f}'}/s after compilation; mean compile "
            f"{'-' if comp is None else f'{comp:.3f}'} s per config; "
            f"{s['worker_restarts']} worker restarts; {s['eager_timings']} timed without a "
            f"CUDA graph; wall {s['wall_min']:.2f} min")

