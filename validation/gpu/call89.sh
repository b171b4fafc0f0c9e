#!/usr/bin/env bash
# Device call 89 (2026-11-24, eighteenth session): the new train set `resnext101` (the
# grouped 3x3s of ResNeXt-101 32x8d and 64x4d) swept over every forward family, and
# grouped_rows' 16-row tiles (forward on the train and holdout plans, the dgrad twin on
# the gradient plan). The sweep checks each config against torch before timing it.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --quiet"
step gpu_tests 90 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py -m gpu -k grouped_rows
step sweep_holdout 60 convdispatch sweep --direction forward --families grouped_rows \
  --problems holdout --out data/sweeps/h100/holdout.csv $S
step sweep_dgrad 90 convdispatch sweep --direction dgrad --families dgrad_grouped_rows \
  --problems resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40 \
  --dtype float16 --out data/sweeps/h100/bwd_dgrad.csv $S
step sweep_train $((585 - SECONDS)) convdispatch sweep --direction forward \
  --problems train --out data/sweeps/h100/train.csv $S
