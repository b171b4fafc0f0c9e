"""Columns of a sweep CSV: one row per (problem, candidate) measured on one GPU.

Units: latencies in microseconds (median of repeats), throughput in TFLOP/s and
GB/s computed from the geometry's FLOPs and its minimum bytes moved.
"""

from __future__ import annotations

GEOMETRY_COLUMNS = (
    "n", "c", "k", "g", "d", "h", "w", "t", "r", "s",
    "stride_d", "stride_h", "stride_w", "pad_d", "pad_h", "pad_w",
    "dil_d", "dil_h", "dil_w", "dims", "dtype", "layout",
)

# name -> (type, meaning)
COLUMNS: dict[str, tuple[str, str]] = {
    "problem_id": ("str", "unique id of the problem: set/layer/n<batch>/<dtype>"),
    "set": ("str", "problem set the problem comes from (resnet50, random_train, ...)"),
    "layer": ("str", "layer name inside its network, or the generator's index"),
    **{c: ("str" if c in ("dtype", "layout") else "int", "geometry (see kernels/geometry.py)")
       for c in GEOMETRY_COLUMNS},
    "family": ("str", "kernel family name from the registry"),
    "config": ("str", "canonical config text, e.g. BLOCK_K=32;BLOCK_M=64;..."),
    "status": ("str", "ok | wrong | compile_error | runtime_error | crashed | timeout"),
    "ok": ("int", "1 when status == ok"),
    "rel_err": ("float", "||out - ref|| / ||ref|| against a float64 (or float32) reference"),
    "latency_us": ("float", "median latency, microseconds; empty unless ok"),
    "latency_p20_us": ("float", "20th percentile latency"),
    "latency_p80_us": ("float", "80th percentile latency"),
    "tflops": ("float", "flops / latency, TFLOP/s"),
    "gbps": ("float", "minimum bytes / latency, GB/s"),
    "cudnn_us": ("float", "torch.nn.functional (cuDNN, channels_last) median latency, same run"),
    "cuda_graph": ("int", "1 when latency_us was timed by replaying a CUDA graph of the call "
                          "(GPU time, no host launch overhead); 0 when timed eagerly or not timed"),
    "compile_s": ("float", "seconds of the first call (compile + run)"),
    "gpu": ("str", "torch.cuda.get_device_name()"),
    "error": ("str", "short failure message; empty when ok"),
}

STATUSES = ("ok", "wrong", "compile_error", "runtime_error", "crashed", "timeout")
KEY_COLUMNS = ("problem_id", "family", "config")
