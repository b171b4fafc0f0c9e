#!/usr/bin/env bash
# Device call 17 (2026-11-23, fourth session): the rest of call 16's depthwise_rows sweep
# of the train plan. 8 check workers, not 15: two large problems ran out of GPU memory
# with 15 in call 16 (those rows were removed so that they are measured again).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step sweep_dw_train 420 convdispatch sweep --problems train --out data/sweeps/h100/train.csv \
  --rep-ms 5 --warmup-ms 2 --jobs 8 --families depthwise_rows
