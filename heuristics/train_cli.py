"""`convdispatch train`: fit the kernel-choice model from sweep CSVs."""

from __future__ import annotations

import argparse

from .train import METHODS, HyperParams, train

_SHOWN = ("efficiency_geomean", "efficiency_p10", "top1", "top5", "picked_failed_rate",
          "vs_cudnn_geomean")


def _csv_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def register(subparsers) -> None:
    d = HyperParams()
    p = subparsers.add_parser(
        "train", help="train the kernel-choice model from sweep CSVs",
        description="Compare LightGBM regression / relative regression / LambdaRank and a "
                    "scikit-learn baseline with grouped CV by problem; write the best "
                    "LightGBM model to --out (model.txt, schema.json, meta.json).")
    p.add_argument("--sweeps", nargs="+", required=True, type=_csv_list, metavar="CSV[,CSV]",
                   help="sweep CSV files, space- or comma-separated")
    p.add_argument("--out", required=True, help="model directory, e.g. models/h100/")
    p.add_argument("--holdout-sets", type=_csv_list, default=[], metavar="A,B",
                   help="problem sets left out of training and CV, scored at the end")
    p.add_argument("--methods", type=_csv_list, default=list(METHODS), metavar="M,N",
                   help=f"methods to compare (default: all of {','.join(METHODS)})")
    p.add_argument("--folds", type=int, default=5, help="grouped CV folds (default 5)")
    p.add_argument("--n-estimators", type=int, default=d.n_estimators)
    p.add_argument("--learning-rate", type=float, default=d.learning_rate)
    p.add_argument("--num-leaves", type=int, default=d.num_leaves)
    p.add_argument("--max-depth", type=int, default=d.max_depth,
                   help="bounds the cost of a cold decision (default %(default)s)")
    p.add_argument("--min-data-in-leaf", type=int, default=d.min_data_in_leaf)
    p.add_argument("--gain-doubling", type=float, default=d.gain_doubling,
                   help="LambdaRank gain doubles every this many relevance grades "
                        "(of 30); 0: linear gain (default %(default)s)")
    p.add_argument("--threads", type=int, default=d.num_threads,
                   help="LightGBM threads; fixed for reproducible models (default %(default)s)")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--quiet", action="store_true", help="print only the summary")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    hp = HyperParams(n_estimators=args.n_estimators, learning_rate=args.learning_rate,
                     num_leaves=args.num_leaves, max_depth=args.max_depth,
                     min_data_in_leaf=args.min_data_in_leaf, seed=args.seed,
                     num_threads=args.threads, gain_doubling=args.gain_doubling)
    log = (lambda _msg: None) if args.quiet else print
    sweeps = [path for group in args.sweeps for path in group]
    meta = train(sweeps, args.out, holdout_sets=args.holdout_sets, methods=args.methods,
                 hp=hp, folds=args.folds, log=log)
    print(format_summary(meta))
    print(f"wrote {args.out} (model {meta['identity']}, method "
          f"{meta.get('shipped', meta['chosen_method'])})")
    return 0


def format_summary(meta: dict) -> str:
    """A plain table of CV (and holdout) metrics per method."""
    lines = []
    for part in ("cv", "holdout"):
        table = meta.get(part)
        if not table:
            continue
        lines.append(f"{part} ({next(iter(table.values())).get('problems', 0)} problems):")
        lines.append("  " + f"{'method':<22}" + "".join(f"{c[:18]:>19}" for c in _SHOWN))
        for method, m in table.items():
            mark = "*" if method == meta.get("shipped", meta["chosen_method"]) else " "
            cells = "".join(f"{m[c]:>19.3f}" if c in m else f"{'-':>19}" for c in _SHOWN)
            lines.append(f"{mark} {method:<22}{cells}")
    return "\n".join(lines)
