#!/usr/bin/env bash
# Device call 297 (2026-11-28, forty-seventh session, two H200s): on GPU 1, grouped_flat's
# GPU tests (every config it offers, the TMA ones merged from the tma-configs branch and
# the filter tiles as cp.async copies, W_ASYNC, included); on GPU 0 at the same time,
# validation/gpu/probe_filter_async.py: W_ASYNC against the plane-at-a-time loads and
# programs of one item, on the issue-6 suite's 21 grouped layers.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(CUDA_VISIBLE_DEVICES=1 step gpu_tests 540 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest \
  -q -p no:cacheprovider tests/test_gpu_families.py -m gpu -k grouped_flat) &
CUDA_VISIBLE_DEVICES=0 step filter_async 520 python3 validation/gpu/probe_filter_async.py \
  "$RES/filter_async.csv" float16 20 8
wait
