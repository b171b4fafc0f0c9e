#!/usr/bin/env bash
# Device call 300 (2026-11-28, forty-seventh session, two H200s): grouped_flat's GPU tests
# with ITEMS=1 configs offered (two items a program leaving SMs idle), TMA ones included
# (the last mbarrier wait's parity now right for an odd number of steps: ITEMS=1 with a
# 3D filter's three depth taps hung in call 298), split over the two GPUs.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
K2D='cg32_7x7 or cg4_56x56 or cg16_dilated or cg8_s3x2'
(CUDA_VISIBLE_DEVICES=1 step gpu_tests_b 480 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest \
  -q -p no:cacheprovider tests/test_gpu_families.py -m gpu -k "grouped_flat and not ($K2D)") &
CUDA_VISIBLE_DEVICES=0 step gpu_tests_a 480 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest \
  -q -p no:cacheprovider tests/test_gpu_families.py -m gpu -k "grouped_flat and ($K2D)"
wait
