#!/usr/bin/env bash
# Device call 232 (2026-11-27, thirty-seventh session): the issue-6 forward suite in
# bfloat16 with forward model 9292db318024, and its 21 grouped layers in float16 again (a
# second run beside call 231's).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step issue6_bf16 420 python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --dtype bfloat16 --chooser model --rep-ms 5 --out "$RES/issue6_bf16"
step grouped6_fp16 $((560 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --only '*resnext*conv2*' \
  --out "$RES/grouped6_fp16"
