#!/usr/bin/env bash
# Device call 169 (2026-11-26, thirtieth session): planes of 8 channels only for 32-channel
# rows (call 168: 1.08-1.10x there, 7% slower at 16 channels, whose code is back to what
# calls 157-167 measured, the same PTX) and grouped_flat's 32-channel filter tiles
# swizzled. GPU tests of the 32-channel forward and dgrad flat kernels, then their rows
# measured again (the BLOCK_N=32 rows of grouped_flat and dgrad_grouped_flat retired
# locally).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py tests/test_gpu_grad.py -m gpu \
  -k "(grouped_flat_configs and cg32_7x7) or (real_shapes and grouped_cg32 and dgrad) or \
(halo_wgrad_configs and wgrad_grouped_flat and cg32_s2_7x7)"
step sweep_dgrad 120 convdispatch sweep --direction dgrad --families dgrad_grouped_flat \
  --problems resnext50_32x4d,random_train:0:40,random_train:3:40 --dtype float16 \
  --out data/sweeps/h100/bwd_dgrad.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
step sweep_holdout 100 convdispatch sweep --families grouped_flat \
  --problems holdout --out data/sweeps/h100/holdout.csv --rep-ms 5 --warmup-ms 2 --jobs 14 \
  --quiet
step sweep_train $((580 - SECONDS)) convdispatch sweep --families grouped_flat \
  --problems train --out data/sweeps/h100/train.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
