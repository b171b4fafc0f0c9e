#!/usr/bin/env bash
# Device call 285 (2026-11-28, forty-fifth session): grouped_flat's GPU tests (every config
# it offers, the WGMMA ones included; call 284 ran them without CONVDISPATCH_GPU_TESTS,
# so they were skipped).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 560 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py -m gpu -k grouped_flat
