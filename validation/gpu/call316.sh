#!/usr/bin/env bash
# Device call 316 (2026-12-08, fiftieth session; the same H100, still warm): grouped_flat's
# GPU tests (every config it offers, TMA ones included, against torch into a poisoned
# output) with the device time that was left; stopped by its 200 s limit after 4 passed.
# Run as one command line:
export RES=/tmp/res316; source validation/gpu/env.sh; cp /tmp/res/model/*.txt /tmp/res/model/*.json models/h100/; trap pack EXIT; step gpu_tests_flat 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_families.py -k grouped_flat; cat $RES/gpu_tests_flat.log | tail -5
