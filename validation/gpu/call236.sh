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
step issue6_fp16 170 python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
step issue6_bf16 170 python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --dtype bfloat16 --chooser model --rep-ms 5 --out "$RES/issue6_bf16"
step grouped6_fp16 60 python3 -m convdispatch.validation.bench_layers --suite issue6 \
  --chooser model --rep-ms 5 --only '*resnext*conv2*' --out "$RES/grouped6_fp16"
step grouped6_bf16 $((592 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --dtype bfloat16 --chooser model --rep-ms 5 --only '*resnext*conv2*' \
  --out "$RES/grouped6_bf16"
