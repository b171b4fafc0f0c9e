#!/usr/bin/env bash
# Device call 126 (2026-11-24, twenty-third session): after the review mend (bench rows from
# one builder, plans' direct launches made whatever the switch said at recording): the
# replay and overlap GPU tests, and the backward bench on two layers in every direction.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_integration.py -m gpu -k "overlap or replayed_plans or side_streams"
step bwd_smoke 120 python3 -m convdispatch.validation.bench_backward --suite issue2 \
  --chooser model --rep-ms 5 --limit 2 --topk 2 --directions dgrad,wgrad,full --out "$RES/bwd_smoke"
