#!/usr/bin/env bash
# Device call 266 (2026-11-27, forty-first session): the issue-6 suite's 21 grouped layers
# again, float16 and bfloat16, under model 418054e8587d (call 263 ran the whole suite).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite grouped6_fp16 90 float16 '*resnext*conv2*'
suite grouped6_bf16 90 bfloat16 '*resnext*conv2*'
