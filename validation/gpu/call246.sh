#!/usr/bin/env bash
# Device call 246 (2026-11-27, thirty-eighth session): the GPU tests that call 241 did not
# run (gradients, fused backward, dependent launches, the TMA and packed families'
# GPU cases, sweep inputs), in one run, to find any other stale test.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 570 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  --durations=15 tests/test_gpu_grad.py tests/test_gpu_fused_backward.py \
  tests/test_gpu_dependent.py tests/test_grouped_packed.py tests/test_implicit_gemm_tma.py \
  tests/test_pointwise_tma.py tests/test_sweep_inputs.py -m gpu
