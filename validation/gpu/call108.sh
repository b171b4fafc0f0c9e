#!/usr/bin/env bash
# Device call 108 (2026-11-24, twentieth session): depthwise_span now loads first only
# where the window's raw values fit in 64 registers a thread (calls 106-107 showed tall
# windows spilling under it); the rows whose schedule that changed were taken out
# (kept in validation/results/depthwise_schedule_h100/call106_107_rows/) and are swept
# again here, with the dgrad rows of one problem that ran out of GPU memory beside 14
# workers in call 107. GPU tests of the depthwise families first.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py tests/test_gpu_grad.py -m gpu -k "depthwise or span"
S="--rep-ms 5 --warmup-ms 2 --quiet"
step sweep_fwd_train 300 convdispatch sweep --direction forward --families depthwise_span \
  --problems train --out data/sweeps/h100/train.csv --jobs 12 $S
step sweep_fwd_holdout 45 convdispatch sweep --direction forward --families depthwise_span \
  --problems holdout --out data/sweeps/h100/holdout.csv --jobs 12 $S
step sweep_dgrad $((585 - SECONDS)) convdispatch sweep --direction dgrad \
  --families dgrad_depthwise_span,dgrad_depthwise \
  --problems resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40 \
  --dtype float16 --out data/sweeps/h100/bwd_dgrad.csv --jobs 8 $S
