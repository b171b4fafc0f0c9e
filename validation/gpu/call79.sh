#!/usr/bin/env bash
# Device call 79 (2026-11-24, fifteenth session): the backward benchmark (issue-2 suite,
# fp16) with the wgrad model retrained on calls 77-78's wgrad_grouped_taps rows (two-stage
# pipeline, three filter rows a program, 16-channel packs, gathered taps), then every
# gradient GPU test.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_model 240 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
step gpu_grad_tests $((585 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_gpu_grad.py
