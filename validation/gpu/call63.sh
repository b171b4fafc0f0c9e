#!/usr/bin/env bash
# Device call 63 (2026-11-24, thirteenth session): feature schema v15 (the persistent
# TMA families; implicit_gemm_tma on strided 2D layers) with every model retrained on the
# sweeps of calls 61-62: GPU tests of the one-tile TMA families after their kernel was
# split into shared pieces (fp16), the issue-6 suite with the forward model choosing,
# then the backward benchmark with the gradient models choosing.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 80 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_pointwise_tma.py tests/test_implicit_gemm_tma.py \
  -k "gpu and not persistent and float16-0.01"
step issue6_model 220 python3 -m convdispatch.validation.bench_layers --suite issue6 \
  --chooser model --rep-ms 5 --out "$RES/issue6_model"
step bwd_model $((585 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
