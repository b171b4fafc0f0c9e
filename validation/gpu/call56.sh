#!/usr/bin/env bash
# Device call 56 (2026-11-24, twelfth session): feature schema v13 with
# wgrad_depthwise_rows and its 8-row tiles; the wgrad model retrained on calls 53 and 55
# (dgrad and forward models retrained on the same rows as before): the backward
# benchmark with the models choosing, the autograd and training GPU tests, and the
# 30-step training check.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_model 240 python3 -m convdispatch.validation.bench_backward --suite issue2 \
  --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_integration.py -k "autograd or training_step or conv3d_backward or (real_shapes and depthwise)"
step train_check $((585 - SECONDS)) python3 -m convdispatch.validation.train_check --steps 30 \
  --out "$RES/train_check"
