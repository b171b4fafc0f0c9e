#!/usr/bin/env bash
# Device call 209 (2026-11-27, thirty-fourth session): the wgrad tile tests that call 208's
# test step had no time left for (run on call 208's warm machine, its compile cache).
source validation/gpu/env.sh
mkdir -p "$OUT"
timeout -s INT 170 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -rA tests/test_gpu_grad.py \
  -k "halo_wgrad" 2>&1 | tee "$OUT/gpu_tests_halo.log"
