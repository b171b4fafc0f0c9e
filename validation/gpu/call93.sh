#!/usr/bin/env bash
# Device call 93 (2026-11-24, eighteenth session): the TMA 1x1 families' tiles 32 channels
# wide on one side (`NARROW_TILES`, offered only where that side has 32 channels or
# fewer): their GPU tests, then the sweep of pointwise_tma, pointwise_tma_persistent
# (train and holdout plans) and the dgrad twin (gradient plan); only the new configs have
# rows to add.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --quiet"
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_pointwise_tma.py -m gpu -k "MobileNet or 144 or 24"
step sweep_train 150 convdispatch sweep --direction forward \
  --families pointwise_tma,pointwise_tma_persistent --problems train \
  --out data/sweeps/h100/train.csv $S
step sweep_holdout 60 convdispatch sweep --direction forward \
  --families pointwise_tma,pointwise_tma_persistent --problems holdout \
  --out data/sweeps/h100/holdout.csv $S
step sweep_dgrad $((585 - SECONDS)) convdispatch sweep --direction dgrad \
  --families dgrad_pointwise_tma \
  --problems resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40 \
  --dtype float16 --out data/sweeps/h100/bwd_dgrad.csv $S
