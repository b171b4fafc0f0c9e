#!/usr/bin/env bash
# Device call 53 (2026-11-24, twelfth session): the split reduction now reads every
# slice of a block of dW in one step over about 256 programs (Nsight Compute in call 52:
# 24 us for a 288-element dW of 483 slices, as long as the gradient kernel itself), and a
# split launch leaves out slices with no steps. GPU tests of every wgrad family on real
# shapes, then wgrad_depthwise_rows swept again (its call-51 rows were timed with the
# old reduction and are dropped).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -k "real_shapes and wgrad"
step sweep_wgrad $((585 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_depthwise_rows --out data/sweeps/h100/bwd_wgrad.csv $S
