#!/usr/bin/env bash
# Device call 270 (2026-11-28, forty-second session): the issue-6 grouped layers again
# under forward model 24623ad94dae (as call 266 did after call 263); one backward pass of
# them under dgrad model 30406f020844 (the twin's row-reuse rows); the GPU tests of the
# dgrad twin on real shapes (its row-reuse configs against torch).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite grouped6_fp16 90 float16 '*resnext*conv2*'
suite grouped6_bf16 90 bfloat16 '*resnext*conv2*'
step bwd_full_grouped6 150 python3 -m convdispatch.validation.bench_backward --suite issue6 \
  --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped6"
step gpu_tests $((520 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_gpu_grad.py -m gpu -k "real_shapes and grouped and dgrad"
