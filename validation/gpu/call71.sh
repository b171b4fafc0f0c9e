#!/usr/bin/env bash
# Device call 71 (2026-11-24, fourteenth session): the stream-K TMA families
# (pointwise_tma_streamk, implicit_gemm_tma_streamk: the one-tile families' tiles, one
# program an SM reducing an equal run of all (tile, step) pairs, split tiles fixed up in a
# fixed order; kernels/streamk.py). GPU tests (fp16: every feasible config against torch,
# the same bits on repeated runs), then their forward sweep over the train plan (every
# dtype the plan holds; resumable, call 72 goes on).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 170 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_pointwise_tma.py tests/test_implicit_gemm_tma.py -k "gpu and (streamk or stream_k) and float16"
step sweep_train $((585 - SECONDS)) convdispatch sweep --problems train \
  --families pointwise_tma_streamk,implicit_gemm_tma_streamk --out data/sweeps/h100/train.csv \
  --rep-ms 5 --warmup-ms 2 --jobs 15 --quiet
