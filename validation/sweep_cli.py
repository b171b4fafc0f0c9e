"""`convdispatch sweep` and `convdispatch merge`."""

from __future__ import annotations

import argparse
import os
import sys

from ..kernels.geometry import DTYPES


def _shard(text: str) -> tuple[int, int]:
    from .sweep import parse_shard

    try:
        return parse_shard(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {v}")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {v}")
    return v


def _dtypes(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in DTYPES]
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"unknown dtype(s) {bad or [text]}; choose from {','.join(DTYPES)}")
    return names


def _csv(text: str) -> str:
    if not text.endswith(".csv"):
        raise argparse.ArgumentTypeError(f"expected a .csv path, got {text!r}")
    return text


def default_jobs() -> int:
    """One check worker per core but one (the parent and the timing worker share it)."""
    return max(1, min(16, (os.cpu_count() or 2) - 1))


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep", help="check and time every feasible kernel config of each problem",
        description="Check and time every feasible (family, config) of each problem on this "
                    "GPU into a CSV (resumable: rerun the same command after an interruption).")
    p.add_argument("--problems", required=True,
                   help="problem spec: set or plan names, comma separated (e.g. resnet50,unet "
                        "or train)")
    p.add_argument("--dtype", type=_dtypes, default=None,
                   help=f"comma list of dtypes to sweep ({','.join(DTYPES)})")
    p.add_argument("--out", required=True, type=_csv, help="output CSV (sidecar: .meta.json)")
    p.add_argument("--shard", type=_shard, default=(0, 1), metavar="I/N",
                   help="run shard I of N (0 <= I < N); merge the shards afterwards")
    p.add_argument("--jobs", type=_positive_int, default=default_jobs(),
                   help="compile/check worker processes (default: %(default)s)")
    p.add_argument("--backend", choices=("cuda", "fake"), default="cuda",
                   help="cuda: the GPU; fake: deterministic stand-in for testing the harness")
    p.add_argument("--limit-candidates", type=_positive_int, default=None, metavar="N",
                   help="at most N candidates per problem, evenly spread over the registry")
    p.add_argument("--warmup-ms", type=_positive_int, default=25, help="do_bench warmup")
    p.add_argument("--rep-ms", type=_positive_int, default=100, help="do_bench repetition time")
    p.add_argument("--check-timeout", type=_positive_float, default=600.0, metavar="S",
                   help="seconds one compile + check may take")
    p.add_argument("--time-timeout", type=_positive_float, default=300.0, metavar="S",
                   help="seconds one timing may take")
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.set_defaults(func=run_sweep_command)

    m = subparsers.add_parser("merge", help="merge sweep shard CSVs",
                              description="Concatenate sweep shard CSVs (and their sidecars) "
                                          "into one; refuses duplicates and mismatched GPUs "
                                          "or harness settings.")
    m.add_argument("--out", required=True, type=_csv, help="merged CSV (must not exist)")
    m.add_argument("inputs", nargs="+", type=_csv, help="shard CSVs")
    m.set_defaults(func=run_merge_command)


def _command(args: argparse.Namespace) -> list[str]:
    """The command line, rebuilt from the parsed arguments (argv may not be sys.argv)."""
    out = ["convdispatch", args.command]
    for key, val in sorted(vars(args).items()):
        if key in ("command", "func", "inputs") or val is None or val is False:
            continue
        flag = "--" + key.replace("_", "-")
        if val is True:
            out.append(flag)
        elif key == "shard":
            out += [flag, f"{val[0]}/{val[1]}"]
        elif isinstance(val, list):
            out += [flag, ",".join(map(str, val))]
        else:
            out += [flag, str(val)]
    return out + list(getattr(args, "inputs", []))


def make_backend(args: argparse.Namespace):
    from .backends import CudaBackend, FakeBackend
    from .timing import TimingSettings

    if args.backend == "fake":
        return FakeBackend()
    return CudaBackend(timing=TimingSettings(warmup_ms=args.warmup_ms, rep_ms=args.rep_ms))


def run_sweep_command(args: argparse.Namespace) -> int:
    from ..data.problems import load_problems
    from .sweep import run_sweep

    problems = load_problems(args.problems, args.dtype)
    if not problems:
        raise ValueError(f"--problems {args.problems!r} selects no problems")
    try:
        summary = run_sweep(problems, args.out, backend=make_backend(args), shard=args.shard,
                            jobs=args.jobs, dtypes=args.dtype,
                            limit_candidates=args.limit_candidates,
                            check_timeout_s=args.check_timeout, time_timeout_s=args.time_timeout,
                            quiet=args.quiet, command=_command(args))
    except KeyboardInterrupt:
        print("convdispatch sweep: interrupted; finished problems are saved, rerun the same "
              "command to resume", file=sys.stderr)
        return 130
    del summary  # printed by run_sweep and kept in the sidecar
    return 0


def run_merge_command(args: argparse.Namespace) -> int:
    from .merge import merge

    meta = merge(args.inputs, args.out, command=_command(args))
    print(f"merged {len(args.inputs)} shard(s), {meta['merged']['rows']} rows -> {args.out}"
          f"{'' if meta['merged']['complete'] else ' (shards incomplete)'}")
    return 0
