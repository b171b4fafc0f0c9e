#!/usr/bin/env bash
# Device call 241 (2026-11-27, thirty-eighth session): the forward GPU tests of every
# family and of the dispatcher's API path (whose launch now runs the geometry without
# its dead taps, over a view of the filter), after the session's changes.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 560 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  -W error::RuntimeWarning tests/test_gpu_families.py tests/test_gpu_integration.py \
  tests/test_dead_taps.py -m gpu
