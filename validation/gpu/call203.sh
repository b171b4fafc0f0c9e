#!/usr/bin/env bash
# Device call 203 (2026-11-27, thirty-third session): the issue-2 grouped one backward
# pass with strided layers fused on items of 64 positions (pair_config), fp16 twice and
# bf16; then the remaining configs of call 202's probe (layer3.0 on, resumed).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
for run in 1 2; do
  step bwd_grouped_$run 120 python3 -m convdispatch.validation.bench_backward \
    --suite issue2 --chooser model --rep-ms 5 --directions full \
    --categories grouped --out "$RES/bwd_grouped_$run"
done
step bwd_grouped_bf16 120 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --dtype bfloat16 \
  --categories grouped --out "$RES/bwd_grouped_bf16"
cp validation/results/fused_backward_h100/call202/fused_fp16.csv "$RES/fused_fp16_resumed.csv"
step fused_fp16_resumed 100 python3 validation/gpu/probe_fused_backward.py \
  "$RES/fused_fp16_resumed.csv" float16
