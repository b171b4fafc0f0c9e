#!/usr/bin/env bash
# Device call 279 (2026-11-28, forty-fourth session): the issue-6 suite once more in both
# dtypes, unchanged from call 278 (model d102c50e1121), as a second sample: call 278's
# float16 dense geomean (0.998) moved with cuDNN's time (1.4% lower than in call 276) while
# ours was 0.5% lower.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_fp16 200
suite issue6_bf16 $((380 - SECONDS)) bfloat16
