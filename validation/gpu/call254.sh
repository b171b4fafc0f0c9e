#!/usr/bin/env bash
# Device call 254 (2026-11-27, thirty-ninth session): the issue-6 suite in bfloat16 once
# more, whole in one run (call 251's stopped at its step's limit), model 605e1d186d09.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_bf16 280 bfloat16
