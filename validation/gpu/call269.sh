#!/usr/bin/env bash
# Device call 269 (2026-11-28, forty-second session): the issue-6 suite in both dtypes
# under the forward model retrained on call 268's row-reuse rows, then grouped_flat's GPU
# tests (every config it offers, the row-reuse ones among them, against torch).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_fp16 200
suite issue6_bf16 200 bfloat16
step gpu_tests $((570 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_gpu_families.py -m gpu -k "grouped_flat_configs"
