#!/usr/bin/env bash
# Device call 165 (2026-11-26, twenty-ninth session): after the Gluon families' shared
# rules and launch operands moved to kernels/gluon_common.py and flat_grid.py (no kernel
# changed): both Gluon wgrad families and the forward grouped_flat on a few real shapes.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests $((140 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_gpu_grad.py tests/test_gpu_families.py -m gpu \
  -k "(halo_wgrad_configs and (cg32_7x7 or cg8_s2_bf16)) or (grouped_flat_configs and cg32_7x7)"
