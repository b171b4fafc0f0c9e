#!/usr/bin/env bash
# Device call 311 (two H200s): probe_flat_sixty_four.py again under the final rule (no
# 64-wide tiles for 32-channel groups: wide_rejects), bfloat16 on GPU 1 and float16 on
# GPU 0 (a second run of call 310's float16 probe, on another machine).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(CUDA_VISIBLE_DEVICES=1 step wide_bf16 300 python3 validation/gpu/probe_flat_sixty_four.py \
   "$RES/wide_bf16.csv" bfloat16 14) &
CUDA_VISIBLE_DEVICES=0 step wide_fp16 300 python3 validation/gpu/probe_flat_sixty_four.py \
  "$RES/wide_fp16.csv" float16 14
wait
