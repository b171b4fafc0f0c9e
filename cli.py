"""The `convdispatch` console command. Each sub-command lives beside the code it runs."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# Modules that expose ``register(subparsers)``; each adds its sub-commands.
COMMAND_MODULES = (
    "convdispatch.dispatcher.demo_cli",
    "convdispatch.validation.sweep_cli",
    "convdispatch.heuristics.train_cli",
    "convdispatch.validation.report_cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="convdispatch", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for mod in COMMAND_MODULES:
        try:
            module = importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name == mod:
                continue
            raise
        module.register(sub)
    return parser


def use_interpreter_without_gpu() -> None:
    """On a machine without CUDA, run kernels in Triton's interpreter (set before any
    kernel is defined: triton.jit reads TRITON_INTERPRET when it decorates)."""
    if "TRITON_INTERPRET" in os.environ:
        return
    import torch

    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"


def main(argv: list[str] | None = None) -> int:
    use_interpreter_without_gpu()
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, TypeError, FileNotFoundError, RuntimeError) as e:
        print(f"convdispatch {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
