#!/usr/bin/env bash
# Device call 308 (two H200s): grouped_flat's GPU tests with the halves' diagonal blocks
# (half_blocks: 32-wide WGMMA tiles of groups of at most 16 channels), 3D cases on GPU 0 and
# 2D on GPU 1; probe_flat_buffers.py's halves mode (each such config with and without) in
# float16 on GPU 1; the issue-6 suite's grouped layers under the shipped model on GPU 0.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(export CUDA_VISIBLE_DEVICES=1
 step gpu_tests_2d 300 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
   tests/test_gpu_families.py -m gpu -k "grouped_flat and not 3d"
 step halves_fp16 200 python3 validation/gpu/probe_flat_buffers.py "$RES/halves_fp16.csv" \
   float16 14 0/1 halves) &
export CUDA_VISIBLE_DEVICES=0
step gpu_tests_3d 240 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py -m gpu -k "grouped_flat and 3d"
suite suite_grouped_fp16 130 float16 '*resnext*.conv2/*'
suite suite_grouped_bf16 130 bfloat16 '*resnext*.conv2/*'
wait
