#!/usr/bin/env bash
# Device call 57 (2026-11-24, twelfth session): wgrad_grouped_taps (a few-channel grouped
# filter's gradient with a filter row's taps in one MMA tile, dY read once a row): GPU
# tests of the wgrad families on the grouped real shapes, then its sweep.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step gpu_tests 100 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -k "real_shapes and wgrad and (grouped or conv3d)"
step sweep_wgrad $((585 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_grouped_taps --out data/sweeps/h100/bwd_wgrad.csv $S
