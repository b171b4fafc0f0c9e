#!/usr/bin/env bash
# Device call 305 (two H200s): grouped_flat's GPU tests with the three-buffer rule
# (input_buffers: one item a program of a 3D WGMMA tile), the 3D cases on GPU 0 and the 2D
# ones on GPU 1; then, on GPU 0, probe_flat_buffers.py's ladder mode (the larger layers'
# 8-warp tiles at ITEMS 6, 8, 12 with 2, 3 and 4 buffers) in float16.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(CUDA_VISIBLE_DEVICES=1 step gpu_tests_2d 540 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest \
   -q -p no:cacheprovider tests/test_gpu_families.py -m gpu -k "grouped_flat and not 3d") &
CUDA_VISIBLE_DEVICES=0 step gpu_tests_3d 270 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest \
  -q -p no:cacheprovider tests/test_gpu_families.py -m gpu -k "grouped_flat and 3d"
CUDA_VISIBLE_DEVICES=0 step ladder_fp16 $((560 - SECONDS)) python3 \
  validation/gpu/probe_flat_buffers.py "$RES/ladder_fp16.csv" float16 14 0/1 ladder
wait
