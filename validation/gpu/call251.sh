#!/usr/bin/env bash
# Device call 251 (2026-11-27, thirty-ninth session): the issue-6 suite in both dtypes with
# the shipped forward model (fill ladder, seed chosen by CV) and the benchmarks' pairing
# of three rounds a side (a, b, b, a, a, b); the grouped layers once more in each dtype;
# then test_implicit_gemm_tma.py's GPU cases (the rest of what call 246 did not reach).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_fp16 180
suite issue6_bf16 180 bfloat16
suite grouped6_fp16 40 "" '*resnext*conv2*'
suite grouped6_bf16 40 bfloat16 '*resnext*conv2*'
step gpu_tests $((590 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider -rfE --durations=10 tests/test_implicit_gemm_tma.py -m gpu
