#!/usr/bin/env bash
# Device call 1 (2026-11-23): GPU tests, a live-validation + autotune smoke run,
# and the issue-2 layer suite under both choosers (the state before new kernels).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -m gpu -q -p no:cacheprovider tests
step live_smoke 170 convdispatch validate --live --problems random_holdout:1000:4 --model models/h100 \
  --out "$RES/live_smoke" --autotune --autotune-runs 2 --rep-ms 10 --warmup-ms 5 --jobs 12
step bench_rule 120 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser rule \
  --rep-ms 10 --out "$RES/bench_rule"
step bench_model 120 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser model \
  --rep-ms 10 --out "$RES/bench_model"
