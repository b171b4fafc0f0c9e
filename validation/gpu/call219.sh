#!/usr/bin/env bash
# Device call 219 (2026-11-27, thirty-fifth session): the fused pass's GPU tests after the
# review fixes (its recorded plans keyed by dX's and dW's layouts too), then the backward
# sweep of RegNet's grouped layers (resumable, into bwd_backward.csv).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 80 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -x -W error::RuntimeWarning \
  tests/test_gpu_fused_backward.py
step sweep_regnet $((250 - SECONDS)) convdispatch sweep --direction backward --problems regnet \
  --out data/sweeps/h100/bwd_backward.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
