#!/usr/bin/env bash
# Device call 227 (2026-11-27, thirty-seventh session): what a launch costs in the
# benchmark's harness (kernels that do nothing, as CUDA-graph replays timed like a layer),
# and serial split-K against the reduce pass, paired in one process, on every split config
# the forward model chose in call 207's issue-6 float16 run; first serial split-K's GPU
# tests (their collection failed in call 226).
# Run with validation/results/serial_split_h100/serial_split.patch applied (not kept).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -W error::RuntimeWarning \
  -p no:cacheprovider tests/test_gpu_serial_split.py
step probe $((380 - SECONDS)) python3 validation/gpu/probe_serial_floor.py \
  validation/results/flat3d_h100/call207/issue6_fp16/bench.csv "$RES/probe"
cp -r "$RES/probe"/* "$RES/" 2>/dev/null
