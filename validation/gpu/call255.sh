#!/usr/bin/env bash
# Device call 255 (2026-11-27, fortieth session): grouped_packed's tap steps (BLOCK_K of
# several whole taps, PACKED_TAP_TILES) swept on both plans (the rows already there are
# kept), then their GPU tests.
# (It ran as the same command lines written out; env.sh's sweep came after.)
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
sweep holdout 120 grouped_packed
sweep train 360 grouped_packed
step gpu_tests 90 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_grouped_packed.py -k tap_steps -m gpu
