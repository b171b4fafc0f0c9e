#!/usr/bin/env bash
# Device call 274 (2026-11-28, forty-third session): grouped_flat's filter tiles loaded a
# plane at once against tap by tap (probe_filter_burst.py), on the issue-6 grouped layers'
# two fastest flat tiles, fp16 and bf16. (The probe switched the two ways with a module
# variable since removed; it now lives in validation/results/filter_burst_h100/, as run.)
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step burst_fp16 300 python3 validation/gpu/probe_filter_burst.py "$RES/burst_fp16.csv" float16 2
step burst_bf16 200 python3 validation/gpu/probe_filter_burst.py "$RES/burst_bf16.csv" bfloat16 1
