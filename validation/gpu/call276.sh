#!/usr/bin/env bash
# Device call 276 (2026-11-28, forty-third session): the issue-6 suite in float16 and
# bfloat16 under the forward model retrained on call 275's grouped_flat rows (filter tiles
# a plane at once). The GPU tests did not fit this session's device time: every row of
# call 275 was checked against torch, and call 274 found the same bits both ways.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_fp16 170
suite issue6_bf16 $((345 - SECONDS)) bfloat16
