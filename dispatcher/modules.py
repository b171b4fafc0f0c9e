"""Drop-in replacements for torch.nn.Conv2d / Conv3d (same constructor, same state_dict)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .api import conv2d, conv3d


class _ConvMixin:
    def _run(self, fn, x: torch.Tensor) -> torch.Tensor:
        if self.padding_mode != "zeros":
            # Same as torch: pad with the mode first, then convolve without padding.
            x = F.pad(x, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return fn(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                  self.groups)


class Conv2d(_ConvMixin, nn.Conv2d):
    """``torch.nn.Conv2d`` whose forward runs convdispatch's chosen kernel."""

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return self._run(conv2d, input)


class Conv3d(_ConvMixin, nn.Conv3d):
    """``torch.nn.Conv3d`` whose forward runs convdispatch's chosen kernel."""

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return self._run(conv3d, input)
