#!/usr/bin/env bash
# Device call 102 (2026-11-24, nineteenth session): wgrad_staged_tma's SPLIT_K=3 and 8
# (call 101's profile: split 4 on ResNet-50 layer3.1.conv2 made 288 programs for 264
# places, a second wave of 24). The GPU tests, then the new configs' sweep on the
# gradient plan (the other rows are done).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --quiet"
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "real_shapes and wgrad"
step sweep_wgrad $((585 - SECONDS)) convdispatch sweep --direction wgrad \
  --families wgrad_staged_tma \
  --problems resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40 \
  --dtype float16 --out data/sweeps/h100/bwd_wgrad.csv $S
