#!/usr/bin/env bash
# Device call 233 (2026-11-27, thirty-seventh session): grouped_packed's GPU tests on
# channels_last layers and its split configs again, whole (call 229's step ran out after
# 33 of 36), with the filter tile's 16-byte copies (W_VEC).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 400 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -W error::RuntimeWarning \
  -p no:cacheprovider tests/test_grouped_packed.py -m gpu -k "channels_last or split"
