#!/usr/bin/env bash
# Device call 163 (2026-11-26, twenty-ninth session): the issue-6 forward suite in bf16 with
# the retrained forward model 42a376052f30 (call 162 ran fp16).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step issue6_bf16 $((330 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --dtype bfloat16 --out "$RES/issue6_bf16"
