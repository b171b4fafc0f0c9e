#!/usr/bin/env bash
# Device call 231 (2026-11-27, thirty-seventh session): the issue-6 forward suite in float16
# with the forward model retrained on call 229's grouped_packed rows (16-byte filter
# copies, W_VEC) and call 230's re-measured rows, then its 21 grouped layers in bfloat16.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_fp16 480
suite grouped6_bf16 $((585 - SECONDS)) bfloat16 '*resnext*conv2*'
