"""`convdispatch sweep`, `convdispatch merge` and `convdispatch retire`."""

from __future__ import annotations

import argparse
import sys

from ..kernels.base import DIRECTIONS
from ..kernels.geometry import DTYPES
from .cli_args import (
    above_one,
    command_line,
    csv_path,
    default_jobs,
    dtypes,
    positive_int,
    positive_seconds,
    shard,
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep", help="check and time every feasible kernel config of each problem",
        description="Check and time every feasible (family, config) of each problem on this "
                    "GPU into a CSV (resumable: rerun the same command after an interruption).")
    p.add_argument("--problems", required=True,
                   help="problem spec: set or plan names, comma separated (e.g. resnet50,unet "
                        "or train)")
    p.add_argument("--dtype", type=dtypes, default=None,
                   help=f"comma list of dtypes to sweep ({','.join(DTYPES)})")
    p.add_argument("--out", required=True, type=csv_path, help="output CSV (sidecar: .meta.json)")
    p.add_argument("--shard", type=shard, default=(0, 1), metavar="I/N",
                   help="run shard I of N (0 <= I < N); merge the shards afterwards")
    p.add_argument("--jobs", type=positive_int, default=default_jobs(),
                   help="compile/check worker processes (default: %(default)s)")
    p.add_argument("--backend", choices=("cuda", "fake"), default="cuda",
                   help="cuda: the GPU; fake: deterministic stand-in for testing the harness")
    p.add_argument("--limit-candidates", type=positive_int, default=None, metavar="N",
                   help="at most N candidates per problem, evenly spread over the registry")
    p.add_argument("--families", type=family_list,
                   default=None, metavar="F1,F2",
                   help="measure only these kernel families (e.g. a family added after the "
                        "sweep ran); the rows of the others are kept")
    p.add_argument("--warmup-ms", type=positive_int, default=25, help="do_bench warmup")
    p.add_argument("--rep-ms", type=positive_int, default=100, help="do_bench repetition time")
    p.add_argument("--check-timeout", type=positive_seconds, default=600.0, metavar="S",
                   help="seconds one compile + check may take")
    p.add_argument("--time-timeout", type=positive_seconds, default=300.0, metavar="S",
                   help="seconds one timing may take")
    p.add_argument("--direction", choices=DIRECTIONS, default="forward",
                   help="what to measure: the forward conv, a gradient (dgrad: of the "
                        "input, wgrad: of the weight) or both in one kernel (backward); "
                        "write each to its own CSV")
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.set_defaults(func=run_sweep_command)

    m = subparsers.add_parser("merge", help="merge sweep shard CSVs",
                              description="Concatenate sweep shard CSVs (and their sidecars) "
                                          "into one; refuses duplicates and mismatched GPUs "
                                          "or harness settings.")
    m.add_argument("--out", required=True, type=csv_path, help="merged CSV (must not exist)")
    m.add_argument("inputs", nargs="+", type=csv_path, help="shard CSVs")
    m.set_defaults(func=run_merge_command)

    r = subparsers.add_parser(
        "retire", help="set aside sweep rows to measure again (changed kernels, noisy timings)",
        description="Move rows from a sweep CSV to <name>.retired.csv beside it, so that the "
                    "next `convdispatch sweep` of the same problems measures them again: the "
                    "rows of kernel families that changed, and/or rows whose timing was "
                    "disturbed. Other rows stay as they are.")
    r.add_argument("--families", type=family_list, default=[], metavar="F1,F2",
                   help="kernel families whose rows to set aside")
    r.add_argument("--strided-only", action="store_true",
                   help="of those families, only the rows of strided convolutions (a family "
                        "whose kernel changed at a stride only)")
    r.add_argument("--row-reuse-only", action="store_true",
                   help="of those families, only the rows of grouped_flat and its dgrad "
                        "twin whose config runs the row-reuse schedule")
    r.add_argument("--dims", type=int, choices=(2, 3), default=None,
                   help="of those families, only the rows of 2D or of 3D convolutions (a "
                        "family whose kernel changed for one of them)")
    r.add_argument("--max-spread", type=above_one, default=None, metavar="R",
                   help="also set aside rows whose P80 / P20 latency exceeds R (e.g. 1.5)")
    r.add_argument("--dead-taps", action="store_true",
                   help="also set aside the rows of problems whose filter has taps that "
                        "read only padding (forward sweeps: their kernels now run without "
                        "those taps)")
    r.add_argument("csvs", nargs="+", type=csv_path, help="sweep CSVs")
    r.set_defaults(func=run_retire_command)


def family_list(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


def make_backend(args: argparse.Namespace):
    from .backends import CudaBackend, FakeBackend
    from .timing import TimingSettings

    direction = getattr(args, "direction", "forward")
    if args.backend == "fake":
        return FakeBackend(direction=direction)
    return CudaBackend(timing=TimingSettings(warmup_ms=args.warmup_ms, rep_ms=args.rep_ms),
                       direction=direction)


def run_sweep_command(args: argparse.Namespace) -> int:
    from ..data.problems import load_problems
    from .sweep import run_sweep

    problems = load_problems(args.problems, args.dtype)
    if not problems:
        raise ValueError(f"--problems {args.problems!r} selects no problems")
    try:
        summary = run_sweep(problems, args.out, backend=make_backend(args), shard=args.shard,
                            jobs=args.jobs, dtypes=args.dtype,
                            limit_candidates=args.limit_candidates, families=args.families,
                            check_timeout_s=args.check_timeout, time_timeout_s=args.time_timeout,
                            quiet=args.quiet, command=command_line(args))
    except KeyboardInterrupt:
        print("convdispatch sweep: interrupted; finished problems are saved, rerun the same "
              "command to resume", file=sys.stderr)
        return 130
    del summary  # printed by run_sweep and kept in the sidecar
    return 0


def run_merge_command(args: argparse.Namespace) -> int:
    from .merge import merge

    meta = merge(args.inputs, args.out, command=command_line(args))
    print(f"merged {len(args.inputs)} shard(s), {meta['merged']['rows']} rows -> {args.out}"
          f"{'' if meta['merged']['complete'] else ' (shards incomplete)'}")
    return 0


def run_retire_command(args: argparse.Namespace) -> int:
    from .sweep import check_families
    from .sweep_csv import retire_rows

    if args.families:
        check_families(args.families, None)
    if not args.families and args.max_spread is None and not args.dead_taps:
        raise ValueError("name --families, --max-spread and/or --dead-taps: nothing to retire")
    if (args.strided_only or args.row_reuse_only or args.dims) and not args.families:
        raise ValueError("--strided-only, --row-reuse-only and --dims narrow --families: "
                         "name the families")
    strided = (" (strided convolutions)" if args.strided_only else "") + (
        " (row-reuse configs)" if args.row_reuse_only else "") + (
        f" ({args.dims}D convolutions)" if args.dims else "")
    what = " or ".join(([f"of {','.join(args.families)}{strided}"] if args.families else [])
                       + ([f"with P80/P20 > {args.max_spread:g}"]
                          if args.max_spread is not None else [])
                       + (["of problems with dead taps"] if args.dead_taps else []))
    for path in args.csvs:
        moved, side = retire_rows(path, args.families, args.max_spread, args.strided_only,
                                  args.dead_taps, args.row_reuse_only, args.dims)
        print(f"{path}: {moved} rows {what} moved to {side}")
    return 0
