#!/usr/bin/env bash
# Device call 175 (2026-11-27, thirty-first session): wgrad_grouped_flat with warps across
# an item's positions (gluon_wgrad.warp_split: num_warps beyond BLOCK_N / 8, each warp its
# own accumulators, added once at the end; call 166 found one warp a scheduler). GPU tests
# of every tile shape on four cases, then the new configs swept on call 157's plan (the
# existing rows are kept: the configs of at most BLOCK_N / 8 warps compile to the same PTX,
# checked on the CPU).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 240 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "halo_wgrad_configs and wgrad_grouped_flat and \
(cg32_7x7 or cg8_s2_bf16 or cg16_dilated_odd or cg8_s3_dilated)"
P=resnext50_32x4d,random_train:0:40,random_train:3:40
step sweep_flat $((570 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_grouped_flat --out data/sweeps/h100/bwd_wgrad.csv --rep-ms 5 \
  --warmup-ms 2 --jobs 14 --dtype float16 --quiet
