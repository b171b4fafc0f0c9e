"""Which chooser decides for a device: the shipped model for that GPU, else the rules."""

from __future__ import annotations

import threading
import warnings

from ..kernels.device import DeviceSpec
from .choosers import Chooser, RuleChooser

RULE = RuleChooser()
_override: Chooser | None = None
_models: dict[tuple[str, str], Chooser] = {}
_lock = threading.Lock()


def set_chooser(chooser: Chooser | str | None) -> None:
    """Use ``chooser`` for every device: 'rule', 'model', a Chooser, or None for the default."""
    global _override
    if chooser is None or chooser == "model":
        _override = None
    elif chooser == "rule":
        _override = RULE
    elif isinstance(chooser, str):
        raise ValueError(f"unknown chooser {chooser!r}: use 'rule', 'model' or a Chooser")
    elif not callable(getattr(chooser, "choose", None)):
        raise TypeError("a chooser needs a choose(geom, candidates, device) method")
    else:
        _override = chooser
    from .api import clear_cache

    clear_cache()


def chooser_for(device: DeviceSpec, direction: str = "forward") -> Chooser:
    """The override if set; else the model shipped for this GPU and direction (forward:
    ``models/<gpu>/``, gradients: ``models/<gpu>/<direction>/``); else the rule chooser."""
    if _override is not None:
        return _override
    if device.key == "interpreter":
        return RULE
    key = (device.key, direction)
    with _lock:
        if key not in _models:
            _models[key] = _load_model_chooser(device, direction) or RULE
        return _models[key]


def _load_model_chooser(device: DeviceSpec, direction: str) -> Chooser | None:
    from .model_chooser import ModelChooser, locate

    path, note = locate(device)
    if path is not None and direction != "forward":
        path = path / direction
        if not path.is_dir():
            warnings.warn(f"convdispatch: no trained {direction} model for {device.name}; "
                          "using the rule chooser for it", RuntimeWarning, stacklevel=3)
            return None
    if path is None:
        warnings.warn(f"convdispatch: no trained model for {device.name}; using the rule "
                      f"chooser ({note})", RuntimeWarning, stacklevel=3)
        return None
    if note:
        warnings.warn(f"convdispatch: {note}", RuntimeWarning, stacklevel=3)
    try:
        return ModelChooser.load(path, direction)
    except ValueError as e:
        from .settings import strict

        if strict():
            raise
        warnings.warn(f"convdispatch: {e}; using the rule chooser", RuntimeWarning, stacklevel=3)
        return None


def reset() -> None:
    """Forget loaded models and every decision made with them."""
    from .api import clear_cache

    with _lock:
        _models.clear()
    clear_cache()
