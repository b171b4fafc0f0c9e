#!/usr/bin/env bash
# Device call 51 (2026-11-24, twelfth session): wgrad_depthwise_rows (depthwise filter
# gradient over runs of output rows, one accumulator a tap) and the reduction that sums
# up to 128 workspace slices a step. GPU tests of the wgrad families on real shapes
# (the reduction serves every split family), then the new family's sweep.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -k "real_shapes and wgrad"
step sweep_wgrad $((585 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_depthwise_rows --out data/sweeps/h100/bwd_wgrad.csv $S
