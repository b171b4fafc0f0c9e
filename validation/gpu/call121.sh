#!/usr/bin/env bash
# Device call 121 (2026-11-24, twenty-second session): the backward suite's dgrad half with
# the dgrad model retrained on call 120's rows (9fe17f0e2e5d): strided dgrad's phases on
# side streams; the side-stream GPU test again (its reference check fixed).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "side_streams"
step bwd_dgrad 240 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions dgrad --out "$RES/bwd_dgrad"
