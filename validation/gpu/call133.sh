#!/usr/bin/env bash
# Device call 133 (2026-11-25, twenty-fourth session): after the review mend (one helper for
# the tensor a launch argument is or holds): call 132's plan, replay, side-stream, overlap
# and graph GPU tests again.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 300 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_integration.py -m gpu \
  -k "tma_plans or overlap or replayed_plans or side_streams or graph"
