#!/usr/bin/env bash
# Device call 159 (2026-11-26, twenty-ninth session): call 158 again after grouped_flat
# became a loop (a program walks two or more items: its filter tiles load once, the next
# item copies while this one computes; call 158 ran one item a program and lost to
# grouped_packed on most layers; its rows were not kept) and after the cp.async alignment
# rule (channel counts multiples of 16: call 158 failed to compile 51 regnet and random
# rows). GPU tests, then the sweeps of grouped_flat (forward holdout and train plans) and
# dgrad_grouped_flat (the gradient problems), resumable: only their rows are measured.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 240 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py tests/test_gpu_grad.py -m gpu \
  -k "grouped_flat or (real_shapes and grouped and dgrad)"
step sweep_dgrad 120 convdispatch sweep --direction dgrad --families dgrad_grouped_flat \
  --problems resnext50_32x4d,random_train:0:40,random_train:3:40 --dtype float16 \
  --out data/sweeps/h100/bwd_dgrad.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
step sweep_holdout 100 convdispatch sweep --families grouped_flat --problems holdout \
  --out data/sweeps/h100/holdout.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
step sweep_train $((575 - SECONDS)) convdispatch sweep --families grouped_flat \
  --problems train --out data/sweeps/h100/train.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
