"""Triton convolution kernels, one module per family with its config space and rules."""
