#!/usr/bin/env bash
# Device call 19 (2026-11-23, fourth session): with the depthwise_rows and grouped_rows
# families and the models retrained on their rows (feature schema v6), the issue-2
# layer suite under the rule and the model chooser, the compiled training step under
# Inductor (GPU test, never run before), then the backward benchmark with the models.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bench_rule 110 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser rule \
  --rep-ms 10 --out "$RES/issue2_rule"
step bench_model 110 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser model \
  --topk 2 --rep-ms 10 --out "$RES/issue2_model"
step gpu_tests 110 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_integration.py tests/test_gpu_families.py -k "training_step or rows"
step bench_bwd_model $((500 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
