#!/usr/bin/env bash
# Device call 208 (2026-11-27, thirty-fourth session): the GPU tests of the flat-grid
# kernels in full (call 205's step ran out of time after 14 passed; call 206's -k filter
# left out the fused backward tests), then the issue-6 forward suite in bfloat16 with the
# retrained forward model.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 360 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -rA \
  tests/test_gpu_fused_backward.py tests/test_gpu_families.py tests/test_gpu_grad.py \
  -k "fused or grouped_flat_configs or halo_wgrad or (grad_families_on_real_shapes and grouped)"
step issue6_bf16 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --dtype bfloat16 --out "$RES/issue6_bf16"
