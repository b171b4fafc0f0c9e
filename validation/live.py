"""Live validation: the dispatcher's own calls timed against a fresh oracle sweep.

Per run: a fresh sweep of the problems (``run_sweep`` into ``<out>/oracle.csv``,
cuDNN timed in the same run), then every problem once through the dispatcher
with the model chooser set, timed with the sweep's timer. The report compares
the dispatcher's latency with the fresh oracle's best and with cuDNN, and flags
*drift*: the dispatcher's call slower than ``drift_threshold`` x the sweep's
latency of the same candidate (the call path adds cost the sweep does not see,
or the machine changed between the two).

The seam is a ``DispatcherTimer``: ``CudaDispatcherTimer`` makes real
``convdispatch.conv2d/conv3d`` calls; ``FakeDispatcherTimer`` takes the
dispatcher's decision (``dispatcher.decide``: registry, chooser, cache) and
gives the chosen candidate FakeBackend's latency, so the logic runs on a CPU.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from .backends import Backend, FakeBackend, short_error
from .sweep import check_problems, run_sweep
from .sweep_csv import read_sweep
from .timing import TimingSettings

DRIFT_THRESHOLD = 1.1


@dataclass(frozen=True)
class DispatchTiming:
    """One problem through the dispatcher: what it launched and how long it took."""

    candidate: str
    latency_us: float
    p20_us: float | None = None
    p80_us: float | None = None
    graphed: bool = False
    first_call_s: float | None = None  # decision + compile (+ run), empty Triton cache
    rel_err: float | None = None
    fallback: str | None = None  # set when the call went to torch instead
    error: str | None = None  # the call raised: latency is NaN


class DispatcherTimer(Protocol):
    name: str

    def start(self, chooser) -> None: ...
    def time_dispatcher(self, problem) -> DispatchTiming: ...
    def finish(self) -> None: ...


@dataclass
class FakeDispatcherTimer:
    """The dispatcher's decision for FakeBackend's device, timed by FakeBackend's formula.

    ``slowdown`` maps a problem id to a factor applied to its latency (to
    exercise the drift check).
    """

    backend: FakeBackend = field(default_factory=FakeBackend)
    slowdown: dict[str, float] = field(default_factory=dict)
    name: str = "fake"

    def start(self, chooser) -> None:
        self._chooser = chooser

    def time_dispatcher(self, problem) -> DispatchTiming:
        from ..dispatcher.api import decide

        t0 = time.perf_counter()
        dec = decide(problem.geom, self.backend.device_spec(), self._chooser)
        first = time.perf_counter() - t0
        out = self.backend.time(problem.id, problem.geom, dec.candidate.id)
        f = float(self.slowdown.get(problem.id, 1.0))
        med, p20, p80 = (v * f for v in out.latency)
        return DispatchTiming(dec.candidate.id, med, p20, p80, out.graphed, first)

    def finish(self) -> None:
        self._chooser = None


@dataclass
class CudaDispatcherTimer:
    """Real ``convdispatch.conv2d/conv3d`` calls on the GPU, timed like the sweep."""

    timing: TimingSettings = field(default_factory=TimingSettings)
    cold_cache: bool = True  # first calls compile with an empty Triton disk cache
    name: str = "cuda"

    def start(self, chooser) -> None:
        import torch

        from ..dispatcher import set_chooser
        from .backends import CudaBackend

        self._stack = contextlib.ExitStack()
        if self.cold_cache:
            self._stack.enter_context(fresh_triton_cache())
        threads = torch.get_num_threads()
        CudaBackend(timing=self.timing).setup()  # the sweep workers' torch flags...
        torch.set_num_threads(threads)  # ...but not their one-thread limit
        set_chooser(chooser)  # also clears the decision cache and recorded plans

    def time_dispatcher(self, problem) -> DispatchTiming:
        import torch

        from ..dispatcher import conv2d, conv3d, explain
        from .inputs import conv_args, make_inputs, reference, rel_err, seed_of
        from .timing import CudaTimer

        torch.cuda.empty_cache()  # the previous problem's tensors are gone by now
        geom = problem.geom
        x, w, b = make_inputs(geom, "cuda", seed_of(problem.id))
        conv, kw = (conv2d if geom.dims == 2 else conv3d), conv_args(geom)
        t0 = time.perf_counter()
        out = conv(x, w, b, **kw)
        torch.cuda.synchronize()
        first = time.perf_counter() - t0
        how = explain(x, w, b, **kw)  # the cached decision the call used
        err = rel_err(out, reference(geom, x, w, b))
        (med, p20, p80), graphed = CudaTimer(self.timing).measure(lambda: conv(x, w, b, **kw))
        cand = how.candidate.id if how.candidate is not None else "torch (fallback)"
        return DispatchTiming(cand, med, p20, p80, graphed, first, err, how.fallback)

    def finish(self) -> None:
        from ..dispatcher import set_chooser

        set_chooser(None)
        self._stack.close()


@contextlib.contextmanager
def fresh_triton_cache() -> Iterator[str]:
    """Point Triton's on-disk cache at an empty directory for the block (first calls then
    include compilation, as in a fresh environment); triton reads the variable per use."""
    old = os.environ.get("TRITON_CACHE_DIR")
    tmp = tempfile.mkdtemp(prefix="convdispatch-triton-")
    os.environ["TRITON_CACHE_DIR"] = tmp
    try:
        yield tmp
    finally:
        if old is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = old
        shutil.rmtree(tmp, ignore_errors=True)


# -- comparing with the fresh sweep ----------------------------------------------------

def oracle_lookup(csv: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per problem: best ok latency, winner, cuDNN; per (problem, candidate): status, us)."""
    df = read_sweep(csv)
    df["candidate"] = df["family"] + ":" + df["config"]
    ok = df[df["ok"] == 1].sort_values(["problem_id", "latency_us", "candidate"])
    best = ok.groupby("problem_id").first()[["candidate", "latency_us"]]
    best.columns = ["winner", "best_us"]
    cudnn = df.groupby("problem_id")["cudnn_us"].median().rename("cudnn_us")
    per_problem = best.join(cudnn, how="outer")
    per_cand = df.set_index(["problem_id", "candidate"])[["status", "latency_us"]]
    return per_problem, per_cand


def live_row(problem, t: DispatchTiming, per_problem: pd.DataFrame, per_cand: pd.DataFrame,
             threshold: float) -> dict:
    """One problem of the live table."""
    row = {"problem_id": problem.id, "set": problem.set, "geometry": problem.geom.describe(),
           "dispatcher_choice": t.candidate, "dispatcher_us": t.latency_us,
           "dispatcher_graphed": t.graphed, "first_call_s": t.first_call_s,
           "rel_err": t.rel_err, "fallback": t.fallback, "error": t.error}
    best = per_problem.loc[problem.id] if problem.id in per_problem.index else None
    row["oracle_winner"] = None if best is None else best["winner"]
    row["oracle_best_us"] = np.nan if best is None else float(best["best_us"])
    row["cudnn_us"] = np.nan if best is None else float(best["cudnn_us"])
    key = (problem.id, t.candidate)
    swept = per_cand.loc[key] if key in per_cand.index else None
    row["sweep_status"] = "not swept" if swept is None else str(swept["status"])
    row["sweep_same_us"] = (float(swept["latency_us"]) if swept is not None
                            and swept["status"] == "ok" else np.nan)
    row["drift_ratio"] = t.latency_us / row["sweep_same_us"]
    row["drift"] = bool(row["drift_ratio"] > threshold)
    row["efficiency"] = row["oracle_best_us"] / t.latency_us
    row["vs_cudnn"] = row["cudnn_us"] / t.latency_us
    return row


def _geomean(values) -> float | None:
    v = np.asarray(list(values), dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    return float(np.exp(np.log(v).mean())) if len(v) else None


def live_summary(rows: list[dict], threshold: float) -> dict:
    df = pd.DataFrame(rows)
    eff = df["efficiency"].to_numpy(dtype=float)
    good = eff[np.isfinite(eff)]
    first = df["first_call_s"].to_numpy(dtype=float)
    return {
        "problems": len(df), "drift_threshold": threshold,
        "efficiency_geomean": _geomean(eff),
        "efficiency_p10": float(np.quantile(good, 0.1)) if len(good) else None,
        "top1": float((df["dispatcher_choice"] == df["oracle_winner"]).mean()),
        "vs_cudnn_geomean": _geomean(df["vs_cudnn"]),
        "oracle_vs_cudnn_geomean": _geomean(df["cudnn_us"] / df["oracle_best_us"]),
        "drift_ratio_geomean": _geomean(df["drift_ratio"]),
        "drifted": df.loc[df["drift"], "problem_id"].tolist(),
        "unverified": df.loc[df["sweep_status"] != "ok", "problem_id"].tolist(),
        "fallbacks": df.loc[df["fallback"].notna(), "problem_id"].tolist(),
        "errors": df.loc[df["error"].notna(), "problem_id"].tolist(),
        "first_call_s_median": float(np.nanmedian(first)) if np.isfinite(first).any() else None,
    }


def run_live(problems: Sequence, model_dir: str | os.PathLike, out_dir: str | os.PathLike, *,
             sweep_backend: Backend, timer: DispatcherTimer, jobs: int = 1,
             limit_candidates: int | None = None, drift_threshold: float = DRIFT_THRESHOLD,
             autotune: Callable[[object, DispatchTiming], dict] | None = None,
             autotune_note: str | None = None, offline: bool = True, quiet: bool = False,
             command: Sequence[str] | None = None) -> dict:
    """Fresh sweep into ``<out>/oracle.csv``, then the dispatcher per problem; writes
    live.csv, live.json and live.md (and the offline report of the fresh sweep in
    ``<out>/offline``). ``autotune(problem, timing)``, if given, adds a row per problem
    to the autotune comparison. Returns the live.json content."""
    from ..dispatcher.model_chooser import ModelChooser
    from ..heuristics.model_store import load_model

    if not drift_threshold > 1.0:
        raise ValueError(f"drift_threshold must be > 1, got {drift_threshold}")
    problems = check_problems(problems)
    if not problems:
        raise ValueError("no problems to validate")
    model = load_model(model_dir)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    oracle_csv = out / "oracle.csv"
    sweep_summary = run_sweep(problems, oracle_csv, backend=sweep_backend, jobs=jobs,
                              limit_candidates=limit_candidates, quiet=quiet,
                              command=command)
    timings, tune_rows = time_problems(problems, ModelChooser(model), timer, autotune, quiet)
    per_problem, per_cand = oracle_lookup(oracle_csv)
    rows = [live_row(p, t, per_problem, per_cand, drift_threshold)
            for p, t in zip(problems, timings)]
    offline_md = None
    if offline:
        from .report import build_report

        build_report([oracle_csv], model_dir, out / "offline")
        offline_md = "offline/report.md"
    return _write_live(out, rows, tune_rows, model, sweep_summary, timer, drift_threshold,
                       autotune_note, command, limit_candidates, offline_md)


def time_problems(problems, chooser, timer: DispatcherTimer, autotune=None,
                  quiet: bool = False) -> tuple[list[DispatchTiming], list[dict]]:
    """Every problem through ``timer`` with ``chooser`` set (and ``autotune`` after each)."""
    timings, tune_rows = [], []
    timer.start(chooser)
    try:
        for i, p in enumerate(problems):
            try:
                t = timer.time_dispatcher(p)
            except Exception as e:  # a failing problem is a finding, not the end of the run
                t = DispatchTiming("-", float("nan"), error=short_error(e))
            timings.append(t)
            if not quiet:
                print(f"[{i + 1}/{len(problems)}] {p.id}: {t.candidate} {t.latency_us:.1f} us",
                      file=sys.stderr)
            if autotune is not None:
                tune_rows.append(autotune(p, t))
    finally:
        timer.finish()
    return timings, tune_rows


def _write_live(out: Path, rows, tune_rows, model, sweep_summary, timer, threshold,
                autotune_note, command, limit_candidates, offline_md) -> dict:
    from .live_md import live_markdown
    from .report import jsonable, model_identity, read_model_meta, sidecar_info
    from .sweep_meta import now_iso

    pd.DataFrame(rows).to_csv(out / "live.csv", index=False)
    result = {
        "header": {"date": now_iso(), "timer": timer.name,
                   "command": list(command) if command is not None else sys.argv,
                   "oracle": sidecar_info(out / "oracle.csv"),
                   "model": model_identity(model, read_model_meta(model.path)),
                   "timing": timer.timing.as_dict() if hasattr(timer, "timing") else None,
                   "limit_candidates": limit_candidates},
        "summary": live_summary(rows, threshold), "sweep": sweep_summary,
        "problems": rows, "autotune": tune_rows, "autotune_note": autotune_note,
        "offline_report": offline_md,
    }
    result = jsonable(result)
    (out / "live.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "live.md").write_text(live_markdown(result))
    return result


__all__ = ["DRIFT_THRESHOLD", "CudaDispatcherTimer", "DispatchTiming", "DispatcherTimer",
           "FakeDispatcherTimer", "fresh_triton_cache", "live_row", "live_summary",
           "oracle_lookup", "run_live", "time_problems"]
