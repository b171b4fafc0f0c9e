"""Benchmark a cold model decision: features + model over all candidates of a new geometry.

    python -m convdispatch.heuristics.bench_predictor [--model DIR] [--gpu h100]

Geometries are the problems of the train and holdout plans; candidates come
from the registry. Without --model it uses the shipped model for --gpu, else
trains a throwaway model on a synthetic sweep (needs lightgbm). Each problem
is timed --repeat times and its fastest run kept (the machine may be shared);
enumerating candidates (the registry's job) is reported apart.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from ..dispatcher import registry
from ..kernels.device import lookup
from .features import feature_matrix
from .model_store import LoadedModel, find_model, load_model


def _synthetic_model(device, out: Path, n_problems: int) -> LoadedModel:
    from .synthetic import synthetic_problems, synthetic_sweep
    from .train import train

    csv = out / "synthetic_sweep.csv"
    probs = synthetic_problems(n_problems, seed=1)
    synthetic_sweep(problems=probs, device=device, candidates=registry.candidates).to_csv(
        csv, index=False)
    train([csv], out / "model", methods=["lgbm_regression"], folds=2, log=lambda _m: None)
    return load_model(out / "model")


def _best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def _stats(ms: list[float]) -> str:
    a = np.asarray(ms)
    return (f"median {np.median(a):.3f}  p90 {np.quantile(a, 0.9):.3f}  "
            f"max {a.max():.3f} ms")


def _booster(model: LoadedModel):
    """lightgbm's own evaluator of the same model file, or None without lightgbm."""
    try:
        import lightgbm
    except ImportError:
        print("lightgbm is not installed: no comparison with Booster.predict")
        return None
    return lightgbm.Booster(model_file=str(model.path / "model.txt"))


def bench(model: LoadedModel, device, repeat: int = 3, stress: int = 200,
          compare_lightgbm: bool = True) -> dict:
    """Per-stage times (ms, best of ``repeat``) over the plan problems; printed and returned.

    With ``compare_lightgbm`` (and lightgbm installed) it also times
    ``Booster.predict`` (one thread) on the same feature matrices as "model".
    """
    from ..data.problems import plan

    problems = plan("train") + plan("holdout")
    booster = _booster(model) if compare_lightgbm else None
    times: dict[str, list[float]] = {"enumerate": [], "features": [], "model": [], "decision": []}
    if booster is not None:
        times["lightgbm"] = []
    counts = []
    for p in problems:
        geom = p.geom
        cands = registry.candidates(geom, device)
        if not cands:
            continue
        counts.append(len(cands))
        X = feature_matrix(geom, cands, device)
        stages = {
            "enumerate": lambda g=geom: registry.candidates(g, device),
            "features": lambda g=geom, c=cands: feature_matrix(g, c, device),
            "model": lambda x=X: model.predict(x),
            "decision": lambda g=geom, c=cands: model.rank(g, c, device),
        }
        if booster is not None:
            stages["lightgbm"] = lambda x=X: booster.predict(x, num_threads=1)
        for stage, fn in stages.items():
            times[stage].append(_best_of(fn, repeat))
    geom = max((p.geom for p in problems), key=lambda g: len(registry.candidates(g, device)))
    cands = registry.candidates(geom, device)
    many = (cands * (stress // len(cands) + 1))[:stress]
    stress_ms = [_best_of(lambda: model.rank(geom, many, device), repeat) for _ in range(20)]
    ens = model.ensemble
    guard = (f", guard {model.guard.n_trees} trees on the top {model.guard_params.top_k}"
             if model.guard is not None else "")
    print(f"model {model.identity} ({model.method}, {ens.n_trees} trees, depth <= "
          f"{ens.max_depth}{guard}) on {device.name}; {len(counts)} geometries, candidates "
          f"median {int(np.median(counts))} max {max(counts)}; best of {repeat} runs each")
    for stage, ms in times.items():
        label = {"decision": "cold decision (features + model + guard + sort)",
                 "enumerate": "registry.candidates (not part of the model)",
                 "model": "model: numpy tree_model",
                 "lightgbm": "model: lightgbm Booster.predict (1 thread)"}.get(stage, stage)
        print(f"  {label:<44} {_stats(ms)}")
    big = [t for t, c in zip(times["decision"], counts) if c >= 60]
    if big:
        print(f"  {'cold decision, >= 60 candidates':<44} {_stats(big)}")
    print(f"  {f'cold decision, {stress} candidates (stress)':<44} {_stats(stress_ms)}")
    return {"times_ms": times, "counts": counts, "stress_ms": stress_ms}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="model directory (default: shipped model for --gpu)")
    ap.add_argument("--gpu", default="h100", help="GPU whose DeviceSpec features use")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-lightgbm", action="store_true",
                    help="do not time lightgbm's Booster.predict for comparison")
    ap.add_argument("--synthetic-problems", type=int, default=300,
                    help="problems in the throwaway synthetic sweep (no model found)")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    device = lookup(args.gpu)
    run = lambda model: _run(model, device, args.repeat, not args.no_lightgbm)
    if args.model:
        return run(load_model(args.model))
    found = find_model(device, nearest=False)
    if found is not None:
        return run(load_model(found))
    print(f"no shipped model for {device.key}: training one on a synthetic sweep ...")
    with tempfile.TemporaryDirectory() as tmp:
        return run(_synthetic_model(device, Path(tmp), args.synthetic_problems))


def _run(model: LoadedModel, device, repeat: int, compare_lightgbm: bool) -> int:
    bench(model, device, repeat, compare_lightgbm=compare_lightgbm)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
