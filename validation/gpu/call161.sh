#!/usr/bin/env bash
# Device call 161 (2026-11-26, twenty-ninth session): grouped_flat (with the ITEMS knob, as
# in call 160) over the forward train plan, so that the forward model can learn it
# (resumable: only its rows are measured).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step sweep_train 560 convdispatch sweep --families grouped_flat --problems train \
  --out data/sweeps/h100/train.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
