#!/usr/bin/env bash
# Device call 204 (2026-11-27, thirty-third session): GPU tests after the fused backward
# pass entered autograd.gradients (gradients, integration, fused kernel).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 330 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -x \
  tests/test_gpu_fused_backward.py tests/test_gpu_grad.py tests/test_gpu_integration.py
