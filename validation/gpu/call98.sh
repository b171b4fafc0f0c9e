#!/usr/bin/env bash
# Device call 98 (2026-11-24, nineteenth session): wgrad_staged_tma after call 97's compile
# error on strided problems (a dim's column phase had two shapes across a constexpr branch;
# now one branch-free formula, with an sm_90 compile test). GPU tests, the copies' share
# of its time, then the sweep of the 369 strided rows call 97 could not measure (its 1184
# others joined data/sweeps/h100/bwd_wgrad.csv).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --quiet"
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "real_shapes and wgrad"
step probe_staged 100 python3 validation/gpu/probe_staged.py
step sweep_wgrad $((585 - SECONDS)) convdispatch sweep --direction wgrad \
  --families wgrad_staged_tma \
  --problems resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40 \
  --dtype float16 --out data/sweeps/h100/bwd_wgrad.csv $S
