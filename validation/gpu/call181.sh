#!/usr/bin/env bash
# Device call 181 (2026-11-27, thirty-first session): the issue-2 grouped gradients each
# alone (the model's two best picks), and the issue-6 forward suite in bf16, as in call 171.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_grouped 150 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions dgrad,wgrad \
  --categories grouped --out "$RES/bwd_grouped"
step issue6_bf16 $((430 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --dtype bfloat16 --out "$RES/issue6_bf16"
