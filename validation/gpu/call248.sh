#!/usr/bin/env bash
# Device call 248 (2026-11-27, thirty-ninth session): grouped_flat's fill ladder (items a
# program that leave at most 1, 2, 3, 4 or 6 programs an SM), swept on both plans (the
# rows already there are kept), then the family's GPU tests (every config it offers).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step sweep_train 330 convdispatch sweep --direction forward --problems train \
  --families grouped_flat --out data/sweeps/h100/train.csv --rep-ms 5 --warmup-ms 2 \
  --jobs 14 --quiet
step sweep_holdout 100 convdispatch sweep --direction forward --problems holdout \
  --families grouped_flat --out data/sweeps/h100/holdout.csv --rep-ms 5 --warmup-ms 2 \
  --jobs 14 --quiet
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py -k grouped_flat -m gpu
