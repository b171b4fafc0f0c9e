"""convdispatch: Triton convolutions chosen by a trained model, not by runtime autotuning."""

__version__ = "0.1.0"
