#!/usr/bin/env bash
# Device call 81 (2026-11-24, sixteenth session): narrow TMA boxes (TILE_W 1, 2, 4) in
# implicit_gemm_tma and its persistent twin. GPU tests of the narrow-box configs
# (test_gpu_narrow_boxes_match_torch), then the forward sweep of the two families over the
# train plan (resumable: only the new configs are timed; the sweep checks every
# candidate against torch before timing it).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_implicit_gemm_tma.py -m gpu -k narrow
step sweep_narrow $((585 - SECONDS)) convdispatch sweep --direction forward \
  --families implicit_gemm_tma,implicit_gemm_tma_persistent --problems train \
  --out data/sweeps/h100/train.csv --rep-ms 5 --warmup-ms 2 --jobs 15 --quiet
