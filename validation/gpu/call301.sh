#!/usr/bin/env bash
# Device call 301 (2026-11-28, forty-seventh session, two H200s): probe_filter_async.py
# again, with ITEMS=1 offered and TMA's last wait fixed (call 300): float16 on GPU 1 (the
# TMA configs of one item that hung in call 298, and those checked with them, now run),
# bfloat16 on GPU 0.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(CUDA_VISIBLE_DEVICES=1 step filter_async_fp16 420 python3 \
  validation/gpu/probe_filter_async.py "$RES/filter_async_fp16.csv" float16 14 8) &
CUDA_VISIBLE_DEVICES=0 step filter_async_bf16 420 python3 \
  validation/gpu/probe_filter_async.py "$RES/filter_async_bf16.csv" bfloat16 14 8
wait
