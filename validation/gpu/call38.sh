#!/usr/bin/env bash
# Device call 38 (2026-11-24, eighth session): the new `pointwise_tma` family (1x1
# stride-1 channels_last convs with TMA loads and stores): its GPU tests, then every
# problem it supports swept on both plans (the other families' rows are kept).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_test 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider -m gpu \
  tests/test_pointwise_tma.py -x
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
step sweep_holdout 150 convdispatch sweep --problems holdout --families pointwise_tma \
  --out data/sweeps/h100/holdout.csv $S
step sweep_train $((560 - SECONDS)) convdispatch sweep --problems train --families pointwise_tma \
  --out data/sweeps/h100/train.csv $S
