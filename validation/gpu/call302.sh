#!/usr/bin/env bash
# Device call 302 (2026-11-28, forty-seventh session, two H200s): every grouped_flat
# config the family offers on the issue-6 suite's 21 grouped layers (float16), W_ASYNC on,
# each checked and timed once: the fastest config a layer over the whole space, TMA and
# ITEMS=1 included (probe_filter_async.py with TOPK 0), the layers split over the GPUs.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(CUDA_VISIBLE_DEVICES=1 step space_1 240 python3 validation/gpu/probe_filter_async.py \
  "$RES/space_1.csv" float16 14 0 1/2) &
CUDA_VISIBLE_DEVICES=0 step space_0 240 python3 validation/gpu/probe_filter_async.py \
  "$RES/space_0.csv" float16 14 0 0/2
wait
