#!/usr/bin/env bash
# Device call 66 (2026-11-24, thirteenth session): the issue-6 suite in float16 and in
# bfloat16 with the forward model retrained after call 65 completed the new families'
# rows on the plans' bf16 and fp32 problems.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step issue6_fp16 250 python3 -m convdispatch.validation.bench_layers --suite issue6 \
  --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
step issue6_bf16 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --dtype bfloat16 --chooser model --rep-ms 5 --out "$RES/issue6_bf16"
