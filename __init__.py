"""convdispatch: Triton convolutions chosen by a trained model, not by runtime autotuning."""

from .dispatcher import (
    Conv2d,
    Conv3d,
    FallbackWarning,
    conv2d,
    conv3d,
    explain,
    force,
    set_chooser,
    set_strict,
)
from .kernels.base import Candidate, Config
from .kernels.geometry import ConvGeometry

__version__ = "0.1.0"

__all__ = ["Candidate", "Config", "Conv2d", "Conv3d", "ConvGeometry", "FallbackWarning",
           "conv2d", "conv3d", "explain", "force", "set_chooser", "set_strict"]
