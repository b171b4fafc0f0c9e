"""convdispatch: Triton convolutions chosen by a trained model, not by runtime autotuning.

Names are imported on first use, so that ``import convdispatch.cli`` can pick
the Triton interpreter on a machine without a GPU before any kernel is defined.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "conv2d": "dispatcher", "conv3d": "dispatcher", "Conv2d": "dispatcher",
    "Conv3d": "dispatcher", "explain": "dispatcher", "force": "dispatcher",
    "set_chooser": "dispatcher", "set_strict": "dispatcher", "clear_cache": "dispatcher",
    "FallbackWarning": "dispatcher", "replace_convs": "dispatcher",
    "Candidate": "kernels.base", "Config": "kernels.base", "ConvGeometry": "kernels.geometry",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'convdispatch' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
