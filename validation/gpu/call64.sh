#!/usr/bin/env bash
# Device call 64 (2026-11-24, thirteenth session): the issue-6 suite in bfloat16 with the
# shipped forward model (schema v15, 7ec7c4a4ffb7) choosing; issue 6 asks for fp16 and
# bf16, and only fp16 had been measured.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step issue6_bf16 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --dtype bfloat16 --chooser model --rep-ms 5 --out "$RES/issue6_bf16"
