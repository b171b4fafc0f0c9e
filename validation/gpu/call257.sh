#!/usr/bin/env bash
# Device call 257 (2026-11-27, fortieth session): the issue-6 suite, float16 and bfloat16,
# under the forward model retrained on the tap-step rows (calls 255-256).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_fp16 275
suite issue6_bf16 275 bfloat16
