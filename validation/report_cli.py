"""`convdispatch validate` (offline report or --live check) and `convdispatch autotune-compare`."""

from __future__ import annotations

import argparse
import sys

from .cli_args import above_one, command_line, default_jobs, dtypes, positive_int


def _timing_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--warmup-ms", type=positive_int, default=25, help="do_bench warmup")
    p.add_argument("--rep-ms", type=positive_int, default=100, help="do_bench repetition time")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "validate", help="model vs oracle: offline report from sweep CSVs, or --live on a GPU",
        description="Offline (default): compare the model's, the rule chooser's and the single "
                    "best config's choices with the oracle of sweep CSVs; writes report.md, "
                    "metrics.json, per_problem.csv and PNG plots into --out. --live: sweep the "
                    "problems afresh, run the dispatcher itself on each and report its latency "
                    "vs the fresh oracle and cuDNN, flagging drift.")
    p.add_argument("--oracle-csv", nargs="+", metavar="CSV", help="sweep CSVs (offline mode)")
    p.add_argument("--model", required=True, metavar="DIR", help="model directory (models/h100)")
    p.add_argument("--out", required=True, metavar="DIR", help="report directory")
    p.add_argument("--problems-filter", metavar="PATTERNS",
                   help="comma list of fnmatch patterns on problem id or set, e.g. "
                        "'resnet50,*/n1/*' (offline: rows of the CSVs; live: the problems "
                        "of --problems)")
    p.add_argument("--single-best", choices=("lopo", "train"), default="lopo",
                   help="single best config: leave-one-problem-out over the CSVs (default) or "
                        "from the model's training sweeps (meta.json data.files)")
    p.add_argument("--live", action="store_true", help="live mode (sweep + dispatcher runs)")
    p.add_argument("--problems", metavar="SPEC", help="live: problem spec, as for sweep")
    p.add_argument("--dtype", type=dtypes, default=None, help="live: comma list of dtypes")
    p.add_argument("--backend", choices=("cuda", "fake"), default="cuda",
                   help="live: cuda (the GPU) or fake (deterministic CPU stand-in)")
    p.add_argument("--jobs", type=positive_int, default=default_jobs(),
                   help="live: sweep compile/check workers (default %(default)s)")
    p.add_argument("--limit-candidates", type=positive_int, default=None, metavar="N",
                   help="live: at most N candidates per problem in the fresh sweep (the "
                        "dispatcher's choice may then be unswept)")
    p.add_argument("--drift-threshold", type=above_one, default=1.1, metavar="X",
                   help="live: flag dispatcher latency > X * the sweep's for the same "
                        "candidate (default %(default)s)")
    p.add_argument("--autotune", action="store_true",
                   help="live: also compare with triton.autotune over the implicit-GEMM configs")
    p.add_argument("--autotune-runs", type=positive_int, default=3,
                   help="live: tunings per problem, each with a fresh Autotuner (stability)")
    p.add_argument("--no-offline", action="store_true",
                   help="live: skip the offline report of the fresh sweep")
    p.add_argument("--quiet", action="store_true")
    _timing_args(p)
    p.set_defaults(func=run_validate)

    a = subparsers.add_parser(
        "autotune-compare", help="model's choice vs triton.autotune (GPU only)",
        description="Wrap the implicit-GEMM kernel in triton.autotune over the registry's "
                    "configs for each problem; report tuning time, the tuned config's latency "
                    "and its stability next to the model's choice. Skips without CUDA.")
    a.add_argument("--problems", required=True, metavar="SPEC")
    a.add_argument("--dtype", type=dtypes, default=None)
    a.add_argument("--model", required=True, metavar="DIR")
    a.add_argument("--out", required=True, metavar="DIR")
    a.add_argument("--runs", type=positive_int, default=3, help="tunings per problem")
    _timing_args(a)
    a.set_defaults(func=run_autotune_compare)


def _timing(args):
    from .timing import TimingSettings

    return TimingSettings(warmup_ms=args.warmup_ms, rep_ms=args.rep_ms)


def _problems(args) -> list:
    from ..data.problems import load_problems
    from .report import matches, parse_filter

    problems = load_problems(args.problems, args.dtype)
    patterns = parse_filter(getattr(args, "problems_filter", None))
    if patterns:
        problems = [p for p in problems if matches(p.id, p.set, patterns)]
    if not problems:
        raise ValueError(f"--problems {args.problems!r} selects no problems"
                         + (f" matching --problems-filter {','.join(patterns)!r}"
                            if patterns else ""))
    return problems


def run_validate(args: argparse.Namespace) -> int:
    if args.live:
        if args.oracle_csv:
            raise ValueError("--live sweeps afresh: do not pass --oracle-csv with it")
        if not args.problems:
            raise ValueError("--live needs --problems SPEC")
        return run_live_command(args)
    if not args.oracle_csv:
        raise ValueError("offline mode needs --oracle-csv FILE [FILE ...] (or use --live)")
    if args.problems or args.autotune:
        raise ValueError("--problems and --autotune belong to --live mode")
    return run_offline_command(args)


def run_offline_command(args: argparse.Namespace) -> int:
    from .report import build_report

    m = build_report(args.oracle_csv, args.model, args.out, args.problems_filter,
                     args.single_best)
    print(f"validated {m['header']['problems']} problems on {', '.join(m['header']['gpus'])} "
          f"with model {m['header']['model']['identity']} -> {args.out}/report.md")
    for name, s in m["overall"].items():
        print(f"  {name:<12} efficiency geomean {s.get('efficiency_geomean', float('nan')):.3f}"
              f"  x cuDNN {s.get('vs_cudnn_geomean') or float('nan'):.3f}")
    return 0


def _autotune_setup(args, timing):
    """(hook or None, note or None) for --autotune."""
    if not args.autotune:
        return None, None
    from .autotune_compare import make_autotune_hook, unavailable_reason

    reason = ("the fake backend has no GPU" if args.backend == "fake"
              else unavailable_reason())
    if reason is not None:
        note = f"triton.autotune comparison skipped: {reason}."
        print(f"convdispatch validate: {note}", file=sys.stderr)
        return None, note
    return make_autotune_hook(timing, args.autotune_runs), None


def run_live_command(args: argparse.Namespace) -> int:
    from .backends import CudaBackend, FakeBackend
    from .live import CudaDispatcherTimer, FakeDispatcherTimer, run_live

    timing = _timing(args)
    if args.backend == "fake":
        backend, timer = FakeBackend(), FakeDispatcherTimer()
    else:
        backend, timer = CudaBackend(timing=timing), CudaDispatcherTimer(timing=timing)
    hook, note = _autotune_setup(args, timing)
    res = run_live(_problems(args), args.model, args.out, sweep_backend=backend, timer=timer,
                   jobs=args.jobs, limit_candidates=args.limit_candidates,
                   drift_threshold=args.drift_threshold, autotune=hook, autotune_note=note,
                   offline=not args.no_offline, quiet=args.quiet, command=command_line(args))
    s = res["summary"]
    print(f"live: {s['problems']} problems -> {args.out}/live.md; efficiency geomean "
          f"{_num(s['efficiency_geomean'])}, x cuDNN {_num(s['vs_cudnn_geomean'])}, "
          f"{len(s['drifted'])} drifted, {len(s['unverified'])} unverified")
    return 0


def _num(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def run_autotune_compare(args: argparse.Namespace) -> int:
    from .autotune_compare import run_compare, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        print(f"convdispatch autotune-compare: skipped: {reason}; run it on a CUDA GPU",
              file=sys.stderr)
        return 0
    run_compare(_problems(args), args.model, args.out, _timing(args), args.runs)
    print(f"autotune comparison -> {args.out}/autotune.md")
    return 0


__all__ = ["register", "run_validate", "run_autotune_compare"]
