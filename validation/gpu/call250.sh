#!/usr/bin/env bash
# Device call 250 (2026-11-27, thirty-ninth session): the GPU tests call 246 did not reach
# (it stopped in test_gpu_fused_backward.py), but for test_implicit_gemm_tma.py (call 251).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 570 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  -rfE --durations=15 tests/test_gpu_fused_backward.py tests/test_gpu_dependent.py \
  tests/test_grouped_packed.py tests/test_sweep_inputs.py tests/test_pointwise_tma.py -m gpu
