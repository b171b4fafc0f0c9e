#!/usr/bin/env bash
# Device call 78 (2026-11-24, fifteenth session): wgrad_grouped_taps with L1_TAPS=1 (every
# filter row's taps gathered on chip from one input block an item). GPU tests of the wgrad
# families on the grouped real shapes, then the wgrad sweep of the family over the
# gradient sweep's problems (resumable: only the new configs run).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -k "wgrad and grouped"
step sweep_wgrad $((585 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_grouped_taps --out data/sweeps/h100/bwd_wgrad.csv $S
