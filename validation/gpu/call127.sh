#!/usr/bin/env bash
# Device call 127 (2026-11-25, twenty-fourth session): plans record TMA descriptors as
# recipes and make them again at replay. The TMA plan tests, the replay and overlap GPU
# tests, the eager training step's host time, and the 30-step training check.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 240 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_integration.py -m gpu \
  -k "tma_plans or overlap or replayed_plans or side_streams or graph"
step step_host 150 python3 validation/gpu/probe_step_host.py "$RES/step_host" 20
step train_check 120 python3 -m convdispatch.validation.train_check --steps 30 --out "$RES/train_check"
