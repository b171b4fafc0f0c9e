#!/usr/bin/env bash
# Device call 95 (2026-11-24, nineteenth session): wgrad_staged_tma, the weight gradient as
# one plain TMA GEMM a tap over staged (zero-padded, stride-phase) copies of X and dY. Its
# GPU tests on real shapes (with every other wgrad family), the staged copies' share of
# its time on the issue-7 suite's slowest wgrad layers, then its sweep on the gradient
# plan (rows added to data/sweeps/h100/bwd_wgrad.csv).
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
