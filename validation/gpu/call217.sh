#!/usr/bin/env bash
# Device call 217 (2026-11-27, thirty-fifth session): the fused backward pass's config is
# now the "backward" model's choice (models/h100/backward f8c07dd28543, trained on call
# 216's sweep). The fused pass's GPU tests, then one backward pass of the issue-6 suite's
# grouped layers, of the issue-2 suite and of the whole issue-6 suite.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 90 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -x -W error::RuntimeWarning \
  tests/test_gpu_fused_backward.py
step bwd_full_grouped6 $((300 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped6"
step bwd_full $((440 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
step bwd_full_issue6 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full_issue6"
