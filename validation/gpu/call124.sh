#!/usr/bin/env bash
# Device call 124 (2026-11-24, twenty-third session): recorded plans replayed straight to
# the compiled kernels (launcher._FastLaunch) and side streams forked with reused events:
# the GPU integration and gradient tests, the eager step probe (each switch on and off),
# and the training check.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 330 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_integration.py tests/test_gpu_grad.py -m gpu -x
step step_host 150 python3 validation/gpu/probe_step_host.py "$RES/step_host" 20
step train_check 60 python3 -m convdispatch.validation.train_check --steps 30 \
  --out "$RES/train_check"
