#!/usr/bin/env bash
# Device call 16 (2026-11-23, fourth session): the new depthwise_rows family on every
# 2D depthwise problem of the train plan (MobileNetV2's layers come first), then the
# holdout plan; rows of the other families are kept (--families).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --families depthwise_rows"
step sweep_dw_train 390 convdispatch sweep --problems train --out data/sweeps/h100/train.csv $S
step sweep_dw_holdout $((565 - SECONDS)) convdispatch sweep --problems holdout \
  --out data/sweeps/h100/holdout.csv $S
