"""Argument types and helpers shared by the sweep and validate command lines."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from ..kernels.geometry import DTYPES


def number(cast: Callable[[str], float], ok: Callable[[float], bool], kind: str,
           bound: str) -> Callable[[str], float]:
    """An argparse type: ``cast(text)`` else 'expected {kind}', then ``ok(v)`` else
    'expected {bound}'."""

    def parse(text: str):
        try:
            v = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind}, got {text!r}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"expected {bound}, got {v}")
        return v

    return parse


positive_int = number(int, lambda v: v >= 1, "a positive integer", "a positive integer")
positive_seconds = number(float, lambda v: v > 0, "a number of seconds",
                          "a positive number of seconds")
above_one = number(float, lambda v: v > 1.0, "a number > 1", "a number > 1")


def shard(text: str) -> tuple[int, int]:
    from .sweep import parse_shard

    try:
        return parse_shard(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def dtypes(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in DTYPES]
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"unknown dtype(s) {bad or [text]}; choose from {','.join(DTYPES)}")
    return names


def csv_path(text: str) -> str:
    if not text.endswith(".csv"):
        raise argparse.ArgumentTypeError(f"expected a .csv path, got {text!r}")
    return text


def default_jobs() -> int:
    """One check worker per core but one (the parent and the timing worker share it)."""
    return max(1, min(16, (os.cpu_count() or 2) - 1))


def command_line(args: argparse.Namespace) -> list[str]:
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
