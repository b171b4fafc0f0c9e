#!/usr/bin/env bash
# Device call 115 (2026-11-24, twenty-second session): grouped dgrad reads the stored
# filter in place (no regrouped copy, one launch fewer): the grouped dgrad GPU tests and
# the re-sweep of the dgrad_grouped_packed / dgrad_grouped_rows rows (set aside by
# `convdispatch retire`; a sweep skips rows it has, so a second call finishes it).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "grouped and dgrad"
S="--rep-ms 5 --warmup-ms 2 --quiet"
PLAN=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step sweep_dgrad $((570 - SECONDS)) convdispatch sweep --direction dgrad \
  --families dgrad_grouped_packed,dgrad_grouped_rows \
  --problems $PLAN --dtype float16 --out data/sweeps/h100/bwd_dgrad.csv --jobs 8 $S
