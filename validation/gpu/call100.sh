#!/usr/bin/env bash
# Device call 100 (2026-11-24, nineteenth session): the committed wgrad_staged_tma after its
# staging decode was folded into common.split_rows (same arithmetic as calls 97-99): the
# gradient GPU tests on real shapes for wgrad, and the probe of its copies again.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "real_shapes and wgrad"
step probe_staged 150 python3 validation/gpu/probe_staged.py
