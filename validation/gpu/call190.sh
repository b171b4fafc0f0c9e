#!/usr/bin/env bash
# Device call 190 (2026-11-27, thirty-second session): after the reduction pass's constant
# divisors and dependent launch: GPU tests of every split wgrad family and the dependent
# launches, then the issue-2 suite's one backward pass and its grouped gradients apart
# (as calls 180-181).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_dependent.py tests/test_gpu_grad.py -k "dependent or real_shapes"
step bwd_full 150 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
step bwd_grouped $((570 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions dgrad,wgrad \
  --categories grouped --out "$RES/bwd_grouped"
