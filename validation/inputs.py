"""Inputs, reference output and error measure of the sweep's correctness check.

Tolerances (norm-wise relative error ``||out - ref|| / ||ref||``). The reference
convolves the *same rounded inputs* in float64 (or float32 without TF32), so a
correct kernel's error comes only from its arithmetic:

* float16 / bfloat16: products are exact in the fp32 accumulator; the error is
  dominated by rounding the output once, about ``u / sqrt(3)`` by norm with unit
  roundoff ``u`` = 2^-11 (fp16, 2.8e-4) or 2^-8 (bf16, 2.3e-3).
* float32 with TF32 allowed (torch's cuDNN default, which the kernels follow):
  both operands are rounded to a 10-bit mantissa, ``u`` = 2^-11, giving about
  ``sqrt(2) * u`` = 7e-4.

Each tolerance is >= 10x that expected error, so summation order, split-K
partial sums or a low-precision intermediate never flag a correct kernel, and
at most 3e-2, so that real bugs (a wrong tap, a skipped channel block, a wrong
group: errors of order 0.1 to 1) are flagged ``wrong``. A norm-wise measure
cannot see a bug confined to a handful of outputs; the kernels' unit tests
compare element-wise.
"""

from __future__ import annotations

import hashlib
import math

import torch
import torch.nn.functional as F

from ..dispatcher.autograd import torch_grad
from ..kernels.geometry import ConvGeometry

TOLERANCE = {"float16": 1e-2, "bfloat16": 3e-2, "float32": 1e-2}

# Problems up to this many FLOPs get a float64 reference on the CPU (fast
# enough there); larger ones a float32 reference on the GPU with TF32 off,
# whose own error (~1e-6) is far below every tolerance.
REF_CPU_MAX_FLOPS = 2e8

REFERENCE_RULE = (f"float64 on CPU when flops <= {REF_CPU_MAX_FLOPS:g}, "
                  "else float32 on the input's device with TF32 disabled")
SEED_RULE = "first 4 bytes of sha1(problem_id), big endian, masked to 31 bits"

TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


def seed_of(problem_id: str) -> int:
    """A stable seed for a problem id (Python's hash() varies per process)."""
    return int.from_bytes(hashlib.sha1(problem_id.encode()).digest()[:4], "big") & 0x7FFFFFFF


def memory_format(geom: ConvGeometry) -> torch.memory_format:
    if geom.layout != "channels_last":
        return torch.contiguous_format
    return torch.channels_last if geom.dims == 2 else torch.channels_last_3d


def input_shapes(geom: ConvGeometry) -> tuple[list[int], list[int]]:
    """(x shape, weight shape) of the geometry's rank."""
    sp = [geom.d, geom.h, geom.w][3 - geom.dims:]
    fl = [geom.t, geom.r, geom.s][3 - geom.dims:]
    return [geom.n, geom.c, *sp], [geom.k, geom.cg, *fl]


def make_inputs(geom: ConvGeometry, device: torch.device | str, seed: int
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Fresh random-normal (x, weight, bias or None) in the geometry's dtype and layout.

    The weight is scaled by 1/sqrt(fan_in) so outputs are O(1) in every dtype;
    it shares the input's memory format, as after ``model.to(channels_last)``.
    """
    if not isinstance(geom, ConvGeometry):
        raise TypeError(f"geom must be a ConvGeometry, got {type(geom).__name__}")
    device = torch.device(device)
    gen = torch.Generator(device=device).manual_seed(int(seed))
    dtype = TORCH_DTYPES[geom.dtype]
    fmt = memory_format(geom)
    xs, ws = input_shapes(geom)

    def randn(shape: list[int], scale: float = 1.0) -> torch.Tensor:
        t = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
        if scale != 1.0:
            t.mul_(scale)
        return t.to(dtype)

    x = randn(xs).contiguous(memory_format=fmt)
    w = randn(ws, 1.0 / math.sqrt(geom.gemm_k)).contiguous(memory_format=fmt)
    bias = randn([geom.k]) if geom.bias else None
    return x, w, bias


def conv_args(geom: ConvGeometry) -> dict:
    """Keyword arguments of F.conv2d / F.conv3d for this geometry (symmetric padding)."""
    lo = 3 - geom.dims
    return dict(stride=geom.stride[lo:], padding=geom.pad[lo:], dilation=geom.dilation[lo:],
                groups=geom.g)


def pad_input(geom: ConvGeometry, x: torch.Tensor) -> torch.Tensor:
    """Apply asymmetric padding explicitly (F.pad order: last dim first)."""
    pads: list[int] = []
    for lo, hi in list(zip(geom.pad, geom.pads_hi))[3 - geom.dims:][::-1]:
        pads += [lo, hi]
    return F.pad(x, pads)


def torch_conv(geom: ConvGeometry, x: torch.Tensor, w: torch.Tensor,
               bias: torch.Tensor | None) -> torch.Tensor:
    """The convolution through torch.nn.functional (cuDNN on a GPU)."""
    conv = F.conv2d if geom.dims == 2 else F.conv3d
    args = conv_args(geom)
    if geom.pad_hi is not None:
        x = pad_input(geom, x)
        args["padding"] = 0
    return conv(x, w, bias, **args)


def reference(geom: ConvGeometry, x: torch.Tensor, w: torch.Tensor,
              bias: torch.Tensor | None) -> torch.Tensor:
    """Exact-ish output of the same inputs: see REFERENCE_RULE."""
    if geom.flops <= REF_CPU_MAX_FLOPS or x.device.type == "cpu":
        dev, dt = torch.device("cpu"), torch.float64
    else:
        dev, dt = x.device, torch.float32
    xr, wr = x.to(dev, dt), w.to(dev, dt)
    br = bias.to(dev, dt) if bias is not None else None
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        return torch_conv(geom, xr, wr, br)


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref|| in the reference's precision; inf for NaN/inf outputs. For a
    pair of outputs (a backward pass's dX and dW), the larger of the two."""
    if isinstance(ref, tuple) or isinstance(out, tuple):
        if not (isinstance(out, tuple) and isinstance(ref, tuple) and len(out) == len(ref)):
            raise ValueError(f"outputs and references differ in kind: {type(out).__name__} "
                             f"against {type(ref).__name__}")
        return max(rel_err(o, r) for o, r in zip(out, ref))
    if tuple(out.shape) != tuple(ref.shape):
        raise ValueError(f"output shape {tuple(out.shape)} != reference {tuple(ref.shape)}")
    o = out.detach().to(ref.device, ref.dtype)
    if not bool(torch.isfinite(o).all()):
        return math.inf
    den = float(torch.linalg.vector_norm(ref))
    num = float(torch.linalg.vector_norm(o - ref))
    if den == 0.0:
        return 0.0 if num == 0.0 else math.inf
    return num / den


def tolerance(dtype: str) -> float:
    try:
        return TOLERANCE[dtype]
    except KeyError:
        raise ValueError(f"no tolerance for dtype {dtype!r}; known: {sorted(TOLERANCE)}") from None


def make_grad_output(geom: ConvGeometry, device: torch.device | str, seed: int) -> torch.Tensor:
    """A fresh random-normal dY (the gradient reaching the conv output), input's layout."""
    device = torch.device(device)
    gen = torch.Generator(device=device).manual_seed(int(seed) ^ 0x5EED)
    shape = [geom.n, geom.k, *geom.out_spatial[3 - geom.dims:]]
    dy = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
    return dy.to(TORCH_DTYPES[geom.dtype]).contiguous(memory_format=memory_format(geom))


def grad_reference(geom: ConvGeometry, direction: str, dy: torch.Tensor, x: torch.Tensor,
                   w: torch.Tensor) -> torch.Tensor:
    """Exact-ish gradient of the same rounded tensors: see REFERENCE_RULE."""
    if geom.flops <= REF_CPU_MAX_FLOPS or x.device.type == "cpu":
        dev, dt = torch.device("cpu"), torch.float64
    else:
        dev, dt = x.device, torch.float32
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        return torch_grad(geom, direction, dy.to(dev, dt), x.to(dev, dt), w.to(dev, dt))
