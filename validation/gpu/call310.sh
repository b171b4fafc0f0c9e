#!/usr/bin/env bash
# Device call 310 (two H200s): grouped_flat's 64-wide WGMMA tiles (diag_blocks: the filter
# tiles' diagonal blocks alone, the halves' too). GPU 0: probe_flat_sixty_four.py in float16
# (every 64-wide config offered on the issue-6 suite's grouped layers, against the shipped
# choice and call 302's fastest narrower WGMMA configs), then the suite's grouped layers
# under the shipped model. GPU 1: grouped_flat's GPU tests (every config offered, the
# 64-wide ones included, with bias, residual and activation fused), 2D then 3D.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(export CUDA_VISIBLE_DEVICES=1
 step gpu_tests_2d 320 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
   tests/test_gpu_families.py -m gpu -k "grouped_flat and not 3d"
 step gpu_tests_3d 220 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
   tests/test_gpu_families.py -m gpu -k "grouped_flat and 3d") &
export CUDA_VISIBLE_DEVICES=0
step wide_fp16 340 python3 validation/gpu/probe_flat_sixty_four.py "$RES/wide_fp16.csv" \
  float16 24
suite suite_grouped_fp16 160 float16 '*resnext*.conv2/*'
wait
