#!/usr/bin/env bash
# Device call 47 (2026-11-24, eleventh session): the stem and depthwise gradient families
# (wgrad_stem, dgrad_stem, wgrad_depthwise_taps): GPU tests on real shapes, their sweeps
# on the gradient sets (resumable: only the new families' rows), then the backward
# benchmark under the rule chooser (the shipped models predate feature schema v12).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -k "real_shapes and (stem or depthwise)"
step sweep_wgrad 150 convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_stem,wgrad_depthwise_taps --out data/sweeps/h100/bwd_wgrad.csv $S
step sweep_dgrad 60 convdispatch sweep --direction dgrad --problems $P \
  --families dgrad_stem --out data/sweeps/h100/bwd_dgrad.csv $S
step bwd_rule $((585 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser rule --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_rule"
