#!/usr/bin/env bash
# Device call 151 (2026-11-26, twenty-eighth session): the final state's GPU tests with
# wgrad_depthwise_span registered (plans, replay, overlap, graphs, autograd, halo; every
# gradient family on real shapes, the new one included), the fold of that family alone at
# 1, 2 and 4 warps (probe_span_gather.py: is call 147's one-warp error the gather's?), and
# the 30-step training check with the shipped models.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step span_gather 60 python3 validation/gpu/probe_span_gather.py "$RES/span_gather.csv"
step gpu_tests 240 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_integration.py -m gpu \
  -k "tma_plans or overlap or replayed_plans or side_streams or graph or autograd or halo"
step gpu_grad_families 270 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_gpu_grad.py -m gpu -k "real_shapes"
step train_check $((585 - SECONDS)) python3 -m convdispatch.validation.train_check --steps 30 \
  --out "$RES/train_check"
