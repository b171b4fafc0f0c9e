#!/usr/bin/env bash
# Device call 131 (2026-11-25, twenty-fourth session): the GPU tests of the committed state
# (d0e2645 + the dependent-launch patch left out), and the probe of depthwise wgrad on the
# tensor cores (validation/gpu/probe_dw_mma.py) on MobileNetV2's batch-32 layers.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_integration.py tests/test_gpu_families.py -m gpu \
  -k "tma_plans or real_shapes and wgrad or splitk or replayed_plans or graph"
step dw_mma 360 python3 validation/gpu/probe_dw_mma.py "$RES/dw_mma.csv"
