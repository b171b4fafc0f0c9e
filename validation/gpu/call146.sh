#!/usr/bin/env bash
# Device call 146 (2026-11-25, twenty-sixth session): the final state's GPU tests after
# the halo kernel's tuple accumulators, the one-signature differentiable call and the
# shared split rule: plans, replay, overlap, graphs, autograd, halo (as call 144), and
# the real-shape gradient families.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 300 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_integration.py -m gpu \
  -k "tma_plans or overlap or replayed_plans or side_streams or graph or autograd or halo"
step gpu_grad_families $((570 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_gpu_grad.py -m gpu -k "real_shapes"
