#!/usr/bin/env bash
# Device call 224 (2026-11-27, thirty-sixth session): the training check again, its loss now
# in float32 whatever the network's dtype (call 223's bfloat16 losses were rounded to 8
# bits, so its zero gap proved nothing), and naming what each grouped layer's backward
# pass ran.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step train_check_bf16 150 python3 -m convdispatch.validation.train_check --steps 30 \
  --dtype bfloat16 --out "$RES/train_check_bf16"
step train_check_fp32 100 python3 -m convdispatch.validation.train_check --steps 30 \
  --out "$RES/train_check_fp32"
