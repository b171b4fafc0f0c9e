#!/usr/bin/env bash
# Device call 80 (2026-11-24, fifteenth session): after folding wgrad_grouped_taps's three
# filter-row steps into one helper (_row_dot; no change in what the kernel computes), the
# GPU tests of the wgrad families on the grouped real shapes and the wgrad half of the
# backward benchmark again (a second sample of call 79's wgrad rows).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -k "wgrad and grouped"
step bwd_wgrad $((585 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions wgrad \
  --out "$RES/bwd_issue2_wgrad"
