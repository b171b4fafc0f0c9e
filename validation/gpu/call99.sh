#!/usr/bin/env bash
# Device call 99 (2026-11-24, nineteenth session): the backward suite's wgrad half with the
# wgrad model retrained on calls 97-98's wgrad_staged_tma rows (bd412f9450c7; forward and
# dgrad models retrained for schema v17 make the same choices on the suites as before),
# a 30-step training check against torch, and the gradient GPU tests.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_wgrad 220 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions wgrad --out "$RES/bwd_wgrad"
step train_check 150 python3 -m convdispatch.validation.train_check --steps 30 \
  --out "$RES/train_check"
step gpu_grad_tests $((585 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_gpu_grad.py
