#!/usr/bin/env bash
# Device call 139 (2026-11-25, twenty-fifth session): the issue-6 layer suite in float16 and
# bfloat16 with the forward model retrained for feature schema v18 (c8ff7e7310ad; same
# rows, 31-33 of 246 choices differ from call 110's model: same_choices.md).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step issue6_fp16 280 python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
step issue6_bf16 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --dtype bfloat16 --out "$RES/issue6_bf16"
