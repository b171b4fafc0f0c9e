#!/usr/bin/env bash
# Device call 306 (two H200s): probe_flat_buffers.py's ladder mode in float16 (call 305's
# never reached its workers), half the layers a GPU.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(CUDA_VISIBLE_DEVICES=1 step ladder_fp16_1 300 python3 validation/gpu/probe_flat_buffers.py \
   "$RES/ladder_fp16_1.csv" float16 14 1/2 ladder) &
CUDA_VISIBLE_DEVICES=0 step ladder_fp16_0 300 python3 validation/gpu/probe_flat_buffers.py \
  "$RES/ladder_fp16_0.csv" float16 14 0/2 ladder
wait
