#!/usr/bin/env bash
# Device call 18 (2026-11-23, fourth session): the new grouped_rows family on every 2D
# grouped problem (2-16 channels a group) of the holdout and train plans.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 12 --families grouped_rows"
step sweep_gr_holdout 200 convdispatch sweep --problems holdout --out data/sweeps/h100/holdout.csv $S
step sweep_gr_train $((280 - SECONDS)) convdispatch sweep --problems train \
  --out data/sweeps/h100/train.csv $S
