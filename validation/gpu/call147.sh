#!/usr/bin/env bash
# Device call 147 (2026-11-25, twenty-seventh session): wgrad_depthwise_span, depthwise
# wgrad over fixed spans of dY's (column, channel) row: its real-shape GPU tests, then
# its sweep (every feasible config on the wgrad problem sets; resumable).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_span_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "real_shapes and wgrad and depthwise"
step sweep_span $((560 - SECONDS)) convdispatch sweep --direction wgrad \
  --families wgrad_depthwise_span \
  --problems resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40 \
  --dtype float16 --out data/sweeps/h100/bwd_wgrad.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
