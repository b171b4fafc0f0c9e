#!/usr/bin/env bash
# Device call 144 (2026-11-25, twenty-fifth session): the final state (wgrad_grouped_halo v2,
# wgrad model 7775552f9d58): the plan, replay, overlap, graph and autograd GPU tests and
# the halo family's tests.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 280 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_integration.py -m gpu \
  -k "tma_plans or overlap or replayed_plans or side_streams or graph or autograd or halo"
