#!/usr/bin/env bash
# Device call 256 (2026-11-27, fortieth session): grouped_packed's tap steps with deeper
# pipelines (the last five PACKED_TAP_TILES) swept on both plans (the rows already there
# are kept), then the tap-step GPU tests.
# (It ran as the same command lines written out; env.sh's sweep came after.)
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
sweep holdout 120 grouped_packed
sweep train 300 grouped_packed
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_grouped_packed.py -k tap_steps -m gpu
