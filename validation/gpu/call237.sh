#!/usr/bin/env bash
# Device call 237 (2026-11-27, thirty-eighth session): the issue-6 suite again in both
# dtypes with the shipped forward model 2a60396bdfd2 (call 236's bfloat16 run timed one
# dense layer's whole conv2d call at 111.6 us against 25.2 us for its chosen kernel alone:
# a disturbed measurement, run again here).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_bf16 240 bfloat16
suite issue6_fp16 $((590 - SECONDS))
