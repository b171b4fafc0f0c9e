#!/usr/bin/env bash
# Device call 97 (2026-11-24, nineteenth session): wgrad_staged_tma with its staging copies
# rewritten again after call 96 (a program moves up to 16 rows of pixels, 8192 elements,
# vectorised; call 96's one row a program took 8-30 us on the probe's layers). GPU tests,
# the copies' share of its time, then the family's sweep on the gradient plan (call 96's
# rows, timed with the earlier copies, are not kept in the data).
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
