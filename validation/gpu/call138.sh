#!/usr/bin/env bash
# Device call 138 (2026-11-25, twenty-fifth session): with the models retrained for feature
# schema v18 (the wgrad model picks wgrad_grouped_halo, a Gluon kernel, on ResNeXt's
# grouped layers): the plan, replay, overlap, graph and autograd GPU tests, and the
# 30-step training check (a ResNeXt-style model, eager and compiled, against torch).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 300 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_integration.py -m gpu \
  -k "tma_plans or overlap or replayed_plans or side_streams or graph or autograd"
step train_check $((570 - SECONDS)) python3 -m convdispatch.validation.train_check --steps 30 \
  --out "$RES/train_check"
