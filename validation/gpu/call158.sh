#!/usr/bin/env bash
# Device call 158 (2026-11-26, twenty-ninth session): the forward grouped_flat family and
# its dgrad twin dgrad_grouped_flat (Gluon, the flat grid of kernels/flat_grid.py), and the
# stride-(3, 2) case of wgrad_grouped_flat that aborted the compiler in call 157 (six phase
# images, now a buffer of eight): GPU tests, then the new families' sweeps (resumable:
# only their rows are measured) over the gradient problems and the forward holdout and
# train plans.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 240 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py tests/test_gpu_grad.py -m gpu \
  -k "grouped_flat or (halo_wgrad_configs and cg8_s3) or (real_shapes and grouped and dgrad)"
step sweep_dgrad 120 convdispatch sweep --direction dgrad --families dgrad_grouped_flat \
  --problems resnext50_32x4d,random_train:0:40,random_train:3:40 --dtype float16 \
  --out data/sweeps/h100/bwd_dgrad.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
step sweep_holdout 100 convdispatch sweep --families grouped_flat --problems holdout \
  --out data/sweeps/h100/holdout.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
step sweep_train $((575 - SECONDS)) convdispatch sweep --families grouped_flat \
  --problems train --out data/sweeps/h100/train.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
