#!/usr/bin/env bash
# Device call 60 (2026-11-24, twelfth session): the wgrad model retrained after call 59
# measured the split families again with the current reduction (3e11dd7ee591): the
# backward benchmark with the models choosing, then wgrad GPU tests on real shapes.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_model 300 python3 -m convdispatch.validation.bench_backward --suite issue2 \
  --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
step gpu_tests $((585 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_gpu_grad.py -k "real_shapes and wgrad"
