#!/usr/bin/env bash
# Device call 94 (2026-11-24, eighteenth session): the issue-6 suite in float16 and
# bfloat16 and the backward suite's dgrad half with the forward and dgrad models
# retrained on call 93's rows (the TMA 1x1 families' 32-channel-wide tiles).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step issue6_fp16 200 python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
step issue6_bf16 200 python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --dtype bfloat16 --out "$RES/issue6_bf16"
step bwd_dgrad $((585 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions dgrad --out "$RES/bwd_dgrad"
