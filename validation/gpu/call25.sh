#!/usr/bin/env bash
# Device call 25 (2026-11-23, sixth session): the new depthwise_span family (spans of
# the flattened (column, channel) row): its GPU test, then its sweep on every 2D
# depthwise problem of the holdout and train plans, then the train sweep resumed.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_test 90 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py -k "span or depthwise_rows"
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
step sweep_holdout_span 90 convdispatch sweep --problems holdout --families depthwise_span \
  --out data/sweeps/h100/holdout.csv $S
step sweep_train_span 300 convdispatch sweep --problems train --families depthwise_span \
  --out data/sweeps/h100/train.csv $S
step sweep_train $((560 - SECONDS)) convdispatch sweep --problems train --out data/sweeps/h100/train.csv $S
