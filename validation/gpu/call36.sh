#!/usr/bin/env bash
# Device call 36 (2026-11-23, eighth session): rows of the forward sweeps whose timing was
# disturbed (P80 / P20 latency above 1.5: 262 of 53 271, one of them a grouped_packed
# config timed at 382 us that runs in 53) were set aside with
# `convdispatch retire --max-spread 1.5`; time them again.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
step sweep_holdout 200 convdispatch sweep --problems holdout --out data/sweeps/h100/holdout.csv $S
step sweep_train $((560 - SECONDS)) convdispatch sweep --problems train \
  --out data/sweeps/h100/train.csv $S
