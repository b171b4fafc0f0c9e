#!/usr/bin/env bash
# Device call 235 (2026-11-27, thirty-eighth session): the dead-tap GPU tests, then the
# issue-6 suite in float16 and bfloat16 with the forward model retrained on call 234's rows
# (forward calls run without the filter taps that read only padding: kernels/dead_taps.py).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_dead_taps.py -m gpu
step issue6_fp16 230 python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
step issue6_bf16 $((590 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --dtype bfloat16 --chooser model --rep-ms 5 --out "$RES/issue6_bf16"
