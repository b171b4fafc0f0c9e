#!/usr/bin/env bash
# Device call 67 (2026-11-24, thirteenth session): boxes of several images in the forward
# box families (implicit_gemm_tma and its persistent twin: kernels/implicit_gemm_tma.py
# box_images). GPU tests of both families (fp16), then the train plan's rows whose tile
# changed (1554 rows of 60 problems, set aside in
# validation/results/persistent_tma_h100/one_image_rows.csv.gz) measured again.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_implicit_gemm_tma.py -k "gpu and float16-0.01"
step sweep_train $((580 - SECONDS)) convdispatch sweep --problems train \
  --families implicit_gemm_tma,implicit_gemm_tma_persistent --out data/sweeps/h100/train.csv \
  --rep-ms 5 --warmup-ms 2 --jobs 15 --quiet
