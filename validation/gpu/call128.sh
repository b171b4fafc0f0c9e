#!/usr/bin/env bash
# Device call 128 (2026-11-25, twenty-fourth session): descriptor plans with the checks of
# repeat differentiable calls skipped, reduce passes launched as programmatic dependents.
# The GPU tests of both, the split wgrad families on real shapes, and the eager training
# step's host time with the settings in interleaved rounds.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 300 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_integration.py tests/test_gpu_families.py -m gpu \
  -k "reduce_pass or tma_plans or real_shapes and wgrad or splitk or replayed_plans or graph"
step step_host 200 python3 validation/gpu/probe_step_host.py "$RES/step_host" 20
