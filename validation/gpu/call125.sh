#!/usr/bin/env bash
# Device call 125 (2026-11-24, twenty-third session): the gradient overlap only inside CUDA
# graph captures by default: its GPU tests, the eager step probe with per-call host times
# (direct replay on and off), and the backward suite's one-pass direction again.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_integration.py -m gpu -k "overlap or replayed_plans"
step step_host 150 python3 validation/gpu/probe_step_host.py "$RES/step_host" 20
step bwd_full 300 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
