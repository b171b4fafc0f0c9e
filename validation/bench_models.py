"""End-to-end model benchmark: torchvision models on convdispatch's convs vs plain torch.

    python -m convdispatch.validation.bench_models --out DIR
        [--models resnet50,mobilenet_v2] [--batches 1,32] [--dtype float16] [--rep-ms 200]

For every model and batch size: torchvision's model (``weights=None``,
BatchNorm statistics calibrated on random images, eval, channels_last,
``--dtype``) runs as is (cuDNN, ``cudnn.benchmark=True``) and
after ``replace_convs`` (convdispatch's convolutions, everything else
unchanged). Both outputs are first checked against the float32 torch model
(TF32 off); only a correct model is timed. Forward passes are timed with the
sweep's harness (``validation.timing.CudaTimer``: a CUDA graph replayed
under ``triton.testing.do_bench``, L2 flushed, median) and eagerly (host
overhead included). A model that fails is recorded with its error and the
others still run. Writes models.csv, models.md and env.json into ``--out``.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import sys
import time
import traceback
import warnings
from pathlib import Path

import torch

from ..dispatcher import CACHE, FallbackWarning, clear_cache, replace_convs
from ..dispatcher.replace import count_convs
from .bench_layers import environment, geomean, rel_err
from .sweep_meta import nvidia_smi, package_version
from .timing import CudaTimer, TimingSettings

DEFAULT_MODELS = ("resnet50", "mobilenet_v2")
# Ours passes when its error (vs float32 torch) is within this factor of torch's own
# error at the same dtype, or below the floor.
ERR_FACTOR, ERR_FLOOR = 3.0, 1e-2


def calibrate_batchnorm(model: torch.nn.Module, size: int = 224, batches: int = 4) -> None:
    """Set BatchNorm statistics from random images, as training would.

    With ``weights=None`` every BatchNorm is the identity in eval mode and
    activations shrink or grow layer after layer (mobilenet_v2's logits
    underflow float16 to zero); calibrated statistics keep them near unit
    scale, like a trained network's, so the accuracy check means something.
    """
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative average over the calibration batches
    model.train()
    gen = torch.Generator(device="cuda").manual_seed(0)
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(8, 3, size, size, device="cuda", generator=gen).to(
                memory_format=torch.channels_last))
    model.eval()


def build(name: str, dtype: torch.dtype, size: int = 224
          ) -> tuple[torch.nn.Module, torch.nn.Module]:
    """(float32 reference, model in ``dtype``): torchvision's, random weights, BatchNorm
    calibrated, eval, channels_last, on the GPU."""
    import torchvision.models as tvm

    if not hasattr(tvm, name):
        raise ValueError(f"torchvision.models has no model {name!r}")
    torch.manual_seed(0)
    ref = getattr(tvm, name)(weights=None).cuda().to(memory_format=torch.channels_last)
    calibrate_batchnorm(ref, size)
    return ref, copy.deepcopy(ref).to(dtype=dtype)


def check(ref32, theirs, ours, x: torch.Tensor) -> dict:
    """Relative errors of torch's and our model against the float32 reference."""
    with torch.no_grad():
        with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
            ref = ref32(x.float())
        torch_out = theirs(x)
        ours_out = ours(x)
        torch.cuda.synchronize()
    torch_err, ours_err = rel_err(torch_out, ref), rel_err(ours_out, ref)
    ok = ours_err <= max(ERR_FACTOR * torch_err, ERR_FLOOR)
    return dict(rel_err_torch=torch_err, rel_err_ours=ours_err, correct=bool(ok))


def choices() -> dict:
    """Chosen family -> number of distinct conv geometries, and the choosers that chose."""
    fams = collections.Counter(d.candidate.family for _, d in CACHE.items())
    who = collections.Counter(d.chooser for _, d in CACHE.items())
    return dict(families=";".join(f"{k}={v}" for k, v in sorted(fams.items())),
                choosers=";".join(f"{k}={v}" for k, v in sorted(who.items())),
                geometries=len(CACHE))


def time_model(fn, settings: TimingSettings) -> tuple[float, float, bool]:
    """(graph-replay median us, eager median us, captured as a CUDA graph?)."""
    (graph_us, _, _), graphed = CudaTimer(settings).measure(fn)
    eager = TimingSettings(warmup_ms=settings.warmup_ms, rep_ms=settings.rep_ms,
                           cuda_graph=False)
    (eager_us, _, _), _ = CudaTimer(eager).measure(fn)
    return graph_us, eager_us, graphed


def measure(name: str, batch: int, dtype: torch.dtype, size: int,
            settings: TimingSettings, log) -> dict:
    row: dict = dict(model=name, batch=batch, dtype=str(dtype).removeprefix("torch."),
                     input=f"{batch}x3x{size}x{size}")
    ref32, theirs = build(name, dtype, size)
    ours = replace_convs(theirs, inplace=False)
    row["convs_ours"], row["convs_torch_left"] = count_convs(ours)
    x = torch.randn(batch, 3, size, size, device="cuda", dtype=dtype)
    x = x.to(memory_format=torch.channels_last)
    clear_cache()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FallbackWarning)
        t0 = time.perf_counter()
        with torch.no_grad():
            ours(x)  # choices, plans and Triton compilation happen here
        torch.cuda.synchronize()
        row["first_call_s"] = time.perf_counter() - t0
        row.update(check(ref32, theirs, ours, x))
    row["fallbacks"] = sum(issubclass(w.category, FallbackWarning) for w in caught)
    row.update(choices())
    del ref32
    if not row["correct"]:
        row["error"] = (f"wrong output: rel err {row['rel_err_ours']:.2e} vs torch's "
                        f"{row['rel_err_torch']:.2e}; not timed")
        return row
    with torch.no_grad():
        row["torch_us"], row["torch_eager_us"], _ = time_model(lambda: theirs(x), settings)
        row["ours_us"], row["ours_eager_us"], row["ours_graphed"] = time_model(
            lambda: ours(x), settings)
    row["speedup"] = row["torch_us"] / row["ours_us"]
    row["eager_speedup"] = row["torch_eager_us"] / row["ours_eager_us"]
    log(f"{name} b{batch}: ours {row['ours_us'] / 1e3:.3f} ms vs torch "
        f"{row['torch_us'] / 1e3:.3f} ms (x{row['speedup']:.2f}; eager "
        f"{row['ours_eager_us'] / 1e3:.2f} vs {row['torch_eager_us'] / 1e3:.2f} ms), "
        f"err {row['rel_err_ours']:.1e} (torch {row['rel_err_torch']:.1e}), {row['families']}")
    return row


def run(models, batches, dtype, size, settings, log) -> list[dict]:
    rows = []
    for name in models:
        for batch in batches:
            try:
                rows.append(measure(name, batch, dtype, size, settings, log))
            except Exception as e:  # one model's failure is data; the others still run
                log(f"{name} b{batch}: FAILED {type(e).__name__}: {e}")
                rows.append(dict(model=name, batch=batch, error=f"{type(e).__name__}: {e}",
                                 traceback=traceback.format_exc(limit=8)))
            finally:
                clear_cache()
                torch.cuda.empty_cache()
    return rows


def summary_md(rows: list[dict], env: dict) -> str:
    lines = [f"# End-to-end models ({env['dtype']}, channels_last)", "",
             "Forward latency of torchvision models (weights=None, eval) with every "
             "nn.Conv2d replaced by convdispatch's (`replace_convs`) vs unchanged torch "
             "(cuDNN, benchmark mode). Times are CUDA-graph replays (device time); "
             "eager times include host overhead.", "",
             f"Device: {env['gpu']}; torch {env['torch']}, torchvision {env['torchvision']}, "
             f"triton {env['triton']}, CUDA {env['cuda']}; {env['date']}.",
             f"Command: `{env['command']}`", "",
             "| model | batch | convs | torch ms | ours ms | x torch | torch eager ms | "
             "ours eager ms | rel err ours / torch | families |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "ours_us" not in r:
            lines.append(f"| {r['model']} | {r['batch']} | {r.get('convs_ours', '-')} | "
                         f"failed: {r.get('error', '?')[:120]} ||||||")
            continue
        lines.append(
            f"| {r['model']} | {r['batch']} | {r['convs_ours']} | {r['torch_us'] / 1e3:.3f} | "
            f"{r['ours_us'] / 1e3:.3f} | {r['speedup']:.2f} | {r['torch_eager_us'] / 1e3:.2f} | "
            f"{r['ours_eager_us'] / 1e3:.2f} | {r['rel_err_ours']:.1e} / "
            f"{r['rel_err_torch']:.1e} | {r['families']} |")
    timed = [r["speedup"] for r in rows if "speedup" in r]
    if timed:
        lines += ["", f"Geomean speedup over torch (graph replay): {geomean(timed):.2f} "
                      f"over {len(timed)} model/batch pairs."]
    return "\n".join(lines) + "\n"


def _csv_list(text: str, cast=str) -> list:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
    try:
        return [cast(t) for t in items]
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--models", type=_csv_list, default=list(DEFAULT_MODELS))
    ap.add_argument("--batches", type=lambda t: _csv_list(t, int), default=[1, 32])
    ap.add_argument("--dtype", choices=["float16", "bfloat16", "float32"], default="float16")
    ap.add_argument("--size", type=int, default=224, help="input height and width")
    ap.add_argument("--warmup-ms", type=int, default=50)
    ap.add_argument("--rep-ms", type=int, default=200)
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("bench_models needs a CUDA GPU")
    try:
        import torchvision  # noqa: F401
    except ImportError:
        raise SystemExit("bench_models needs torchvision (pip install torchvision)") from None
    if any(b < 1 for b in a.batches) or a.size < 32:
        raise SystemExit("--batches must be >= 1 and --size >= 32")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    settings = TimingSettings(warmup_ms=a.warmup_ms, rep_ms=a.rep_ms)
    command = "python -m convdispatch.validation.bench_models " + " ".join(
        sys.argv[1:] if argv is None else argv)
    env = environment("models", a.dtype, command)
    env.update(torchvision=package_version("torchvision"), timing=settings.as_dict(),
               nvidia_smi=nvidia_smi(), models=a.models, batches=a.batches, size=a.size)
    torch.backends.cudnn.benchmark = True  # the baseline is cuDNN's best algorithm
    rows = run(a.models, a.batches, getattr(torch, a.dtype), a.size, settings,
               lambda m: print(m, flush=True))
    import pandas as pd

    pd.DataFrame(rows).to_csv(out / "models.csv", index=False)
    (out / "env.json").write_text(json.dumps(env, indent=1))
    md = summary_md(rows, env)
    (out / "models.md").write_text(md)
    print(md)
    return 0 if rows and all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
