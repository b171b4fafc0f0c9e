#!/usr/bin/env bash
# Device call 286 (2026-11-28, forty-fifth session): the issue-6 suite under the forward
# model retrained with grouped_flat's WGMMA rows (feature schema v21), both dtypes; then
# the grouped layers again in each dtype (a second sample of the category that moved).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_fp16 210
suite issue6_bf16 $((420 - SECONDS)) bfloat16
suite grouped_fp16 $((500 - SECONDS)) "" "*resnext*conv2*"
suite grouped_bf16 $((580 - SECONDS)) bfloat16 "*resnext*conv2*"
