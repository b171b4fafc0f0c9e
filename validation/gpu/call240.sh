#!/usr/bin/env bash
# Device call 240 (2026-11-27, thirty-eighth session): the issue-6 suite in float16 and
# bfloat16 with the forward model retrained on calls 234 and 239's rows (dead taps
# dropped; grouped_flat's filter tiles in registers and its 16-item configs), and its
# grouped layers a second time in each dtype.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_fp16 170
suite issue6_bf16 170 bfloat16
suite grouped6_fp16 60 "" '*resnext*conv2*'
suite grouped6_bf16 60 bfloat16 '*resnext*conv2*'
