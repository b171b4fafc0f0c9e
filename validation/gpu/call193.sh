#!/usr/bin/env bash
# Device call 193 (2026-11-27, thirty-second session): the Gluon grouped wgrad families'
# configs on GPU (splits included) and the issue-6 suite in bfloat16 (as call 181).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -k "halo_wgrad"
step issue6_bf16 $((560 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --dtype bfloat16 --out "$RES/issue6_bf16"
