#!/usr/bin/env bash
# Device call 278 (2026-11-28, forty-fourth session): the issue-6 suite in float16 and
# bfloat16 under the forward model retrained on call 277's grouped_flat rows (filter tiles
# in vector loads); one backward pass of the grouped layers under dgrad model
# 52254c184852 (not measured in the forty-third session); the family's GPU tests.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_fp16 170
suite issue6_bf16 170 bfloat16
step bwd_full_grouped6 120 python3 -m convdispatch.validation.bench_backward --suite issue6 \
  --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped6"
step gpu_tests $((590 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_gpu_families.py -m gpu -k "grouped_flat"
