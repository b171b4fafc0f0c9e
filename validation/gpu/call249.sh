#!/usr/bin/env bash
# Device call 249 (2026-11-27, thirty-ninth session): the issue-6 suite in both dtypes with
# the forward model retrained on grouped_flat's fill-ladder rows (call 248), then the
# grouped layers once more in each dtype.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_fp16 170
suite issue6_bf16 170 bfloat16
suite grouped6_fp16 60 "" '*resnext*conv2*'
suite grouped6_bf16 $((592 - SECONDS)) bfloat16 '*resnext*conv2*'
