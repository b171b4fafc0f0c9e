#!/usr/bin/env bash
# Device call 68 (2026-11-24, thirteenth session): the 55 train rows whose timing was
# disturbed (P80 / P20 above 1.5: 7 of call 67's rows, 48 older ones), set aside with
# `convdispatch retire --max-spread 1.5 data/sweeps/h100/train.csv`, timed again.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step sweep_train $((580 - SECONDS)) convdispatch sweep --problems train \
  --out data/sweeps/h100/train.csv --rep-ms 5 --warmup-ms 2 --jobs 15 --quiet
