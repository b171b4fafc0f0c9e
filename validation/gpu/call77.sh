#!/usr/bin/env bash
# Device call 77 (2026-11-24, fifteenth session): GPU tests of the wgrad families on the
# grouped and depthwise real shapes, then the wgrad sweep of wgrad_grouped_taps's new
# config space (FILTER_ROWS, num_stages 2 and 3, 16-channel packs; call 76's probe rows
# of ResNeXt-50 already merged) and of wgrad_depthwise_rows's num_stages=2 configs over
# the gradient sweep's problems (resumable: rows already there are kept).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -k "wgrad and (grouped or depthwise)"
step sweep_wgrad $((585 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_grouped_taps,wgrad_depthwise_rows --out data/sweeps/h100/bwd_wgrad.csv $S
