#!/usr/bin/env bash
# Device call 2 (2026-11-23): resume the H100 sweep plans, which adds the rows of the
# new `depthwise` family and the 2D-tile `grouped_packed` configs and finishes the
# problems the first session had no time for; then a short live-validation smoke run.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --quiet"
step sweep_train 330 convdispatch sweep --problems train --out data/sweeps/h100/train.csv $S
step sweep_holdout 170 convdispatch sweep --problems holdout --out data/sweeps/h100/holdout.csv $S
step live_smoke 60 convdispatch validate --live --problems random_holdout:1000:3 --model models/h100 \
  --out "$RES/live_smoke" --autotune --autotune-runs 2 --rep-ms 10 --warmup-ms 5 --jobs 12
