#!/usr/bin/env bash
# Device call 69 (2026-11-24, thirteenth session): the issue-6 suite in float16 and in
# bfloat16 with the forward model retrained on calls 67-68 (boxes of several images).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step issue6_fp16 250 python3 -m convdispatch.validation.bench_layers --suite issue6 \
  --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
step issue6_bf16 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --dtype bfloat16 --chooser model --rep-ms 5 --out "$RES/issue6_bf16"
