#!/usr/bin/env bash
# Device call 232 (2026-11-27, thirty-seventh session): the issue-6 forward suite in
# bfloat16 with forward model 9292db318024, and its 21 grouped layers in float16 again (a
# second run beside call 231's).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_bf16 420 bfloat16
suite grouped6_fp16 $((560 - SECONDS)) "" '*resnext*conv2*'
