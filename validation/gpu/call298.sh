#!/usr/bin/env bash
# Device call 298 (2026-11-28, forty-seventh session, two H200s): call 297 again after its
# fixes: the filter's cp.async copies only where 16 bytes from an aligned filter (the
# unaligned-filter tests failed to compile with 2-byte copies), ITEMS_PER_PROGRAM no longer
# specialised (ITEMS=1 folded the loop away and hit an LLVM assertion), and the probe's
# checks stop on a worker that aborts instead of waiting for it.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(export CUDA_VISIBLE_DEVICES=1
 step gpu_tests 360 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
   tests/test_gpu_families.py -m gpu -k grouped_flat
 step gpu_grad_tests 170 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
   tests/test_gpu_grad.py -m gpu -k grouped_flat) &
CUDA_VISIBLE_DEVICES=0 step filter_async 520 python3 validation/gpu/probe_filter_async.py \
  "$RES/filter_async.csv" float16 20 8
wait
