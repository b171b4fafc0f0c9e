#!/usr/bin/env bash
# Device call 83 (2026-11-24, sixteenth session): the issue-6 suite in bfloat16 with the
# forward model retrained on call 81's narrow-box rows (e52d3a647a3a).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step issue6_bf16 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --dtype bfloat16 --out "$RES/issue6_bf16"
