#!/usr/bin/env bash
# Device call 105 (2026-11-24, twentieth session): the depthwise memory schedule.
# depthwise_span issues every load before its first store, depthwise dgrad reads the
# filter's taps in place (no regroup launch), wgrad_depthwise_rows pipelines its item
# loop (num_stages 2, 3). GPU tests of those families, then their best swept configs
# timed again on MobileNetV2's layers (probe_depthwise.py), before any re-sweep.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py tests/test_gpu_grad.py -m gpu -k "depthwise or span"
step probe 360 python3 validation/gpu/probe_depthwise.py 3
