#!/usr/bin/env bash
# Device call 50 (2026-11-24, eleventh session): feature schema v12 (dgrad_stem,
# wgrad_stem, wgrad_depthwise_taps) with every model retrained on the sweeps of calls
# 47-49: GPU tests of the changed kernels on real shapes, the backward benchmark with the
# models choosing, the issue-6 suite, then the issue-2 suite.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 100 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -k "real_shapes and (stem or depthwise)"
step bwd_model 230 python3 -m convdispatch.validation.bench_backward --suite issue2 \
  --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
step issue6_model 200 python3 -m convdispatch.validation.bench_layers --suite issue6 \
  --chooser model --rep-ms 5 --out "$RES/issue6_model"
step issue2_model $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue2 --chooser model --topk 2 --rep-ms 10 --out "$RES/issue2_model"
