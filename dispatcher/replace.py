"""replace_convs(): run an existing model's nn.Conv2d / nn.Conv3d layers on convdispatch."""

from __future__ import annotations

import copy

from torch import nn

from .modules import Conv2d, Conv3d

# Exact torch classes only: a subclass (LazyConv2d, QAT or parametrized convs, a user's
# conv with its own forward) has behaviour a class swap would lose, so it is left alone.
_OURS = {nn.Conv2d: Conv2d, nn.Conv3d: Conv3d}


def replace_convs(model: nn.Module, *, inplace: bool = True) -> nn.Module:
    """Make every ``nn.Conv2d`` / ``nn.Conv3d`` in ``model`` a convdispatch Conv2d / Conv3d.

    Each layer keeps its identity, Parameter objects, buffers, hooks, device,
    dtype, training flag and ``state_dict`` keys: only its class changes
    (convdispatch's modules are subclasses that differ only in ``forward``).
    All ``padding_mode`` values are kept (convdispatch's modules pad like torch).
    Subclasses of the torch convolutions and layers that are already
    convdispatch's are left alone, so a second call changes nothing.

    With ``inplace=False`` a deep copy is converted and ``model`` is untouched.
    Returns the converted model (``model`` itself when ``inplace``).
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"replace_convs() takes an nn.Module, got {type(model).__name__}")
    if not isinstance(inplace, bool):
        raise TypeError(f"replace_convs(): inplace must be a bool, got {type(inplace).__name__}")
    if not inplace:
        model = copy.deepcopy(model)
    for module in model.modules():
        ours = _OURS.get(type(module))
        if ours is not None:
            module.__class__ = ours
    return model


def count_convs(model: nn.Module) -> tuple[int, int]:
    """(convdispatch convolutions, torch convolutions left) in ``model``."""
    ours = sum(isinstance(m, (Conv2d, Conv3d)) for m in model.modules())
    torch_left = sum(isinstance(m, (nn.Conv2d, nn.Conv3d)) and not isinstance(m, (Conv2d, Conv3d))
                     for m in model.modules())
    return ours, torch_left
