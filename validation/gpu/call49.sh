#!/usr/bin/env bash
# Device call 49 (2026-11-24, eleventh session): wgrad_reduce_kernel now keeps four
# workspace slices in flight (few programs for a small dW had made it latency-bound), so
# the wgrad families whose best configs split most are swept again: wgrad_direct,
# wgrad_depthwise_taps and wgrad_stem (their earlier rows dropped). GPU tests of the
# split reduction's users on real shapes first.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step gpu_tests 100 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -k "real_shapes and wgrad and (stem or depthwise or dense3x3)"
step sweep_wgrad $((585 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_depthwise_taps,wgrad_stem,wgrad_direct --out data/sweeps/h100/bwd_wgrad.csv $S
