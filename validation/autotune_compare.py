"""The model's choice vs ``triton.autotune`` over the same implicit-GEMM configs.

What a user without the model would write: ``triton.autotune`` around our
implicit-GEMM kernel (kernels/implicit_gemm.py), configs = the ones the
registry offers the ``implicit_gemm`` family for the geometry, keyed on the
shape arguments. Per problem we measure

- first-call time of the tuned kernel: tuning (compile + benchmark of every
  config) + the call, in a process whose Triton disk cache started empty;
  kernels compiled earlier in the same process (the model's choice, earlier
  problems) are reused, as in a network;
- the tuned choice's latency with the sweep's timer (validation/timing.py);
- stability: tuning repeated ``runs`` times with fresh Autotuner objects
  (later runs reuse the compiled kernels, so they cost benchmarking only);

and put it next to the dispatcher's choice (model, no tuning) from live mode.
Three config-dependent arguments of the kernel (EVEN_C, K_ITERS,
ITERS_PER_SPLIT) are derived from BLOCK_K, so each triton.Config carries them.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..dispatcher import registry
from ..kernels.base import Candidate, Config
from ..kernels.device import DeviceSpec
from ..kernels.geometry import ConvGeometry
from .report_md import fmt, table

FAMILY = "implicit_gemm"
# Runtime shape arguments of igemm_kernel: the autotuning key (Triton adds tensor dtypes).
SHAPE_KEY = ("M", "CG", "KG", "D", "H", "W", "OD", "OH", "OW", "T", "R", "S",
             "std", "sth", "stw", "pdd", "pdh", "pdw", "dld", "dlh", "dlw")
# Meta-parameters a triton.Config sets (num_warps / num_stages are its own fields).
TUNED = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "EVEN_C", "K_ITERS", "ITERS_PER_SPLIT")
RUNS = 3


def unavailable_reason() -> str | None:
    """Why the comparison cannot run here (None when it can): it needs a CUDA GPU."""
    from ..kernels.device import interpreter_enabled

    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU (torch.cuda.is_available() is False)"
    if interpreter_enabled():
        return "TRITON_INTERPRET=1 is set: tuning timings in the interpreter mean nothing"
    return None


def registry_candidates(geom: ConvGeometry, device: DeviceSpec) -> list[Candidate]:
    """The implicit_gemm candidates the registry offers (empty when it cannot run geom)."""
    return registry.family(FAMILY).candidates(geom, device)


def k_iters(geom: ConvGeometry, block_k: int) -> int:
    """Reduction steps of igemm_kernel: (t, r, s, channel block) pairs."""
    return geom.t * geom.r * geom.s * -(-geom.cg // block_k)


def tuned_values(geom: ConvGeometry, cfg: Config) -> dict[str, int | bool]:
    """Meta-parameters of one config, with the arguments derived from BLOCK_K."""
    bk = cfg["BLOCK_K"]
    iters = k_iters(geom, bk)
    return {"BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": cfg["BLOCK_N"], "BLOCK_K": bk,
            "GROUP_M": cfg.get("GROUP_M", 8), "EVEN_C": geom.cg % bk == 0,
            "K_ITERS": iters, "ITERS_PER_SPLIT": iters}


def triton_configs(geom: ConvGeometry, cands: Sequence[Candidate]) -> list:
    """One triton.Config per registry candidate, same tiles, warps and stages."""
    import triton

    out = []
    for c in cands:
        if c.family != FAMILY:
            raise ValueError(f"{c.id} is not an {FAMILY} candidate")
        if c.config.get("SPLIT_K", 1) != 1:
            raise ValueError(f"{c.id}: split-K configs are not autotuned here")
        out.append(triton.Config(tuned_values(geom, c.config),
                                 num_warps=c.config["num_warps"],
                                 num_stages=c.config["num_stages"]))
    return out


def candidate_of(tc) -> Candidate:
    """The registry candidate a triton.Config stands for."""
    kw = tc.kwargs
    return Candidate(FAMILY, Config(BLOCK_K=kw["BLOCK_K"], BLOCK_M=kw["BLOCK_M"],
                                    BLOCK_N=kw["BLOCK_N"], GROUP_M=kw["GROUP_M"],
                                    num_stages=tc.num_stages, num_warps=tc.num_warps))


def kernel_args(call) -> tuple[list, dict]:
    """(positional arguments up to the tuned ones, fixed keyword arguments) of igemm_kernel
    for a ConvCall, as kernels/implicit_gemm.launch_igemm passes them (SPLIT_K = 1)."""
    from ..kernels.common import dot_precision, needs_int64, out_args, strides5, upcast_dot

    g = call.geom
    od, oh, ow = g.out_spatial
    args = [call.x, call.w, *out_args(call), call.out,
            g.gemm_m, g.cg, g.kg, g.d, g.h, g.w, od, oh, ow, g.t, g.r, g.s,
            *g.stride, *g.pad, *g.dilation, *strides5(call.x), *strides5(call.w)]
    fixed = {"SPLIT_K": 1, "HAS_DEPTH": g.has_depth, "ACT": call.activation,
             "HAS_BIAS": call.bias is not None,
             "HAS_RES": call.residual is not None, "PREC": dot_precision(call),
             "UPCAST": upcast_dot(call), "INT64": needs_int64(call)}
    return args, fixed


def grid_of(geom: ConvGeometry):
    """Launch grid as a function of the chosen meta-parameters."""
    return lambda meta: (-(-geom.gemm_m // meta["BLOCK_M"]) * -(-geom.kg // meta["BLOCK_N"]),
                         geom.g, 1)


def make_tuner(configs: list, do_bench=None):
    """A fresh Autotuner around igemm_kernel (no on-disk autotuning cache).

    ``do_bench`` None: Triton's default benchmarker (do_bench, eager launches, L2
    flushed), as a user gets it; tests pass their own to run on the interpreter.
    """
    import triton

    from ..kernels.implicit_gemm import igemm_kernel

    return triton.autotune(configs=configs, key=list(SHAPE_KEY), cache_results=False,
                           do_bench=do_bench)(igemm_kernel)


@dataclass
class TuneRun:
    first_call_s: float
    bench_s: float | None
    candidate: str


def conv_call(geom: ConvGeometry, x, w, bias, out):
    """A ConvCall on 5D views, as dispatcher.launch builds it."""
    import torch

    from ..kernels.base import ConvCall

    def as5d(t):
        return t if t is None or geom.dims == 3 else t.unsqueeze(2)

    return ConvCall(x=as5d(x), w=as5d(w), out=as5d(out), bias=bias, residual=None, geom=geom,
                    activation=0, allow_tf32=torch.backends.cudnn.allow_tf32)


def tune_once(geom: ConvGeometry, call, configs: list,
              do_bench=None) -> tuple[TuneRun, object]:
    """Tune with a fresh Autotuner; (the run, a callable launching the tuned kernel)."""
    import torch

    tuner = make_tuner(configs, do_bench)
    args, fixed = kernel_args(call)
    grid = grid_of(geom)
    t0 = time.perf_counter()
    tuner[grid](*args, **fixed)
    if call.x.is_cuda:
        torch.cuda.synchronize()
    first = time.perf_counter() - t0
    run = TuneRun(first, getattr(tuner, "bench_time", None), candidate_of(tuner.best_config).id)
    return run, (lambda: tuner[grid](*args, **fixed))


def tune_problem(problem, device: DeviceSpec, timing, runs: int = RUNS) -> dict:
    """Autotune one problem ``runs`` times; time the first run's choice (GPU only)."""
    import torch

    from .inputs import make_inputs, memory_format, reference, rel_err, seed_of
    from .timing import CudaTimer

    geom = problem.geom
    cands = registry_candidates(geom, device)
    if not cands:
        why = registry.family(FAMILY).supports(geom) or "no feasible config"
        return {"problem_id": problem.id, "configs": 0, "note": f"{FAMILY}: {why}"}
    x, w, b = make_inputs(geom, "cuda", seed_of(problem.id))
    out = torch.empty([geom.n, geom.k, *geom.out_spatial[3 - geom.dims:]], device="cuda",
                      dtype=x.dtype, memory_format=memory_format(geom))
    call, configs = conv_call(geom, x, w, b, out), triton_configs(geom, cands)
    tuned = [tune_once(geom, call, configs) for _ in range(runs)]
    err = rel_err(out, reference(geom, x, w, b))
    (med, _, _), _ = CudaTimer(timing).measure(tuned[0][1])
    choices = [r.candidate for r, _ in tuned]
    return {"problem_id": problem.id, "configs": len(configs),
            "tune_first_call_s": tuned[0][0].first_call_s,
            "tune_bench_s": [r.bench_s for r, _ in tuned],
            "tune_later_calls_s": [r.first_call_s for r, _ in tuned[1:]],
            "autotune_choice": choices[0], "choices": choices,
            "stable": len(set(choices)) == 1, "autotune_us": med, "autotune_rel_err": err}


def comparison_row(tune: dict, dispatch) -> dict:
    """A tuning result next to the dispatcher's (model's) choice for the same problem."""
    row = dict(tune)
    row.update(model_choice=dispatch.candidate, model_us=dispatch.latency_us,
               model_first_call_s=dispatch.first_call_s)
    a = tune.get("autotune_us")
    row["model_vs_autotune"] = (a / dispatch.latency_us) if a and dispatch.latency_us else None
    return row


def markdown_lines(rows: Sequence[dict], note: str | None = None) -> list[str]:
    """The comparison table (and a note, e.g. why it was skipped)."""
    lines = ["## Model vs triton.autotune (implicit GEMM configs of the registry)", ""]
    if note:
        lines += [note, ""]
    if not rows:
        return lines
    lines += ["autotune first call = tuning (compile + benchmark of every config) + the call; "
              "later tunings reuse compiled kernels. model first call = decision + compile "
              "of one kernel. x = autotune us / model us (> 1: the model's choice is faster).",
              ""]
    heads = ["problem", "configs", "autotune first call s", "later tunings s", "stable",
             "autotune choice", "autotune us", "model choice", "model us",
             "model first call s", "x"]
    body = []
    for r in rows:
        if not r.get("configs"):
            body.append([r["problem_id"], 0, "-", "-", "-", r.get("note", "-"), "-",
                         f"`{r.get('model_choice', '-')}`", fmt(r.get("model_us"), 1),
                         fmt(r.get("model_first_call_s"), 2), "-"])
            continue
        later = ", ".join(fmt(s, 2) for s in r.get("tune_later_calls_s", []))
        body.append([r["problem_id"], r["configs"], fmt(r["tune_first_call_s"], 2), later or "-",
                     "yes" if r["stable"] else f"no ({len(set(r['choices']))} choices)",
                     f"`{r['autotune_choice']}`", fmt(r["autotune_us"], 1),
                     f"`{r.get('model_choice', '-')}`", fmt(r.get("model_us"), 1),
                     fmt(r.get("model_first_call_s"), 2), fmt(r.get("model_vs_autotune"), 2)])
    return lines + table(heads, body) + [""]


def make_autotune_hook(timing, runs: int = RUNS):
    """``autotune(problem, dispatch_timing) -> row`` for run_live (GPU only)."""
    from ..kernels.device import spec_of

    def hook(problem, dispatch) -> dict:
        import torch

        try:
            tune = tune_problem(problem, spec_of(torch.device("cuda")), timing, runs)
        except Exception as e:  # one failing problem must not end the run: report it
            from .backends import short_error

            tune = {"problem_id": problem.id, "configs": 0, "note": short_error(e)}
        row = comparison_row(tune, dispatch)
        print(f"  autotune: {row.get('autotune_choice', row.get('note'))} "
              f"{fmt(row.get('autotune_us'), 1)} us, first call "
              f"{fmt(row.get('tune_first_call_s'), 2)} s", file=sys.stderr)
        return row

    return hook


def run_compare(problems: Sequence, model_dir, out_dir, timing, runs: int = RUNS) -> dict:
    """Autotune vs the model on ``problems`` without a sweep; writes autotune.md/.json."""
    import json
    from pathlib import Path

    from ..dispatcher.model_chooser import ModelChooser
    from ..heuristics.model_store import load_model
    from .live import CudaDispatcherTimer, time_problems
    from .report import jsonable, model_identity, read_model_meta
    from .sweep import check_problems

    reason = unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"the autotune comparison needs a CUDA GPU: {reason}")
    problems = check_problems(problems)
    model = load_model(model_dir)
    timer = CudaDispatcherTimer(timing=timing)
    _, rows = time_problems(problems, ModelChooser(model), timer, make_autotune_hook(timing, runs),
                        quiet=False)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result = jsonable({"model": model_identity(model, read_model_meta(model.path)),
                       "environment": _environment(), "timing": timing.as_dict(),
                       "rows": rows})
    (out / "autotune.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "autotune.md").write_text("\n".join(_header_lines(result) + markdown_lines(rows)))
    return result


def _environment() -> dict:
    from .backends import CudaBackend

    return CudaBackend().environment()


def _header_lines(result: dict) -> list[str]:
    env, m = result["environment"], result["model"]
    sw = env.get("software", {})
    return ["# Model vs triton.autotune", "",
            f"- GPU: {env['gpu']['name']}; torch {sw.get('torch')}, triton {sw.get('triton')}, "
            f"CUDA {sw.get('cuda')}",
            f"- model {m['path']}: identity {m['identity']}, method {m['method']}", ""]


__all__ = ["SHAPE_KEY", "TUNED", "candidate_of", "comparison_row", "kernel_args",
           "make_autotune_hook", "markdown_lines", "registry_candidates", "run_compare",
           "triton_configs", "tune_problem", "tuned_values", "unavailable_reason"]
