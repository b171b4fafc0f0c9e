#!/usr/bin/env bash
# Device call 171 (2026-11-27, thirtieth session): the issue-6 forward suite in bf16 and
# the issue-2 suite's grouped gradients each alone (top-2), with the models of call 170.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_grouped 150 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions dgrad,wgrad \
  --categories grouped --out "$RES/bwd_grouped"
step issue6_bf16 $((560 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --dtype bfloat16 --out "$RES/issue6_bf16"
