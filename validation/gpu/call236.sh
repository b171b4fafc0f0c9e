#!/usr/bin/env bash
# Device call 236 (2026-11-27, thirty-eighth session): grouped_flat's GPU tests with its 2D
# 16-channel filter tiles held in registers (every config, epilogue fused) and the
# dead-tap tests; then the issue-6 suite in float16 and bfloat16 with the forward model
# retrained on call 234's rows (dead taps dropped, grouped_flat's registers), and its
# grouped layers a second time in each dtype.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py tests/test_dead_taps.py -m gpu -k "grouped_flat or dead_taps"
suite issue6_fp16 170
suite issue6_bf16 170 bfloat16
suite grouped6_fp16 60 "" '*resnext*conv2*'
suite grouped6_bf16 $((592 - SECONDS)) bfloat16 '*resnext*conv2*'
