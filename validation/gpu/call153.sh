#!/usr/bin/env bash
# Device call 153 (2026-11-26, twenty-eighth session): the gradient families on the new
# 143-channel depthwise case of tests/test_gpu_grad.py (wgrad_depthwise_span's spans start
# mid-pixel there; its first and last config, as for every family), after the review mend.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_c143 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "real_shapes and depthwise_c143"
