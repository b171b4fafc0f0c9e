#!/usr/bin/env bash
# Device call 167 (2026-11-26, thirtieth session): wgrad_grouped_flat with four items in
# shared memory (num_stages=4: three items' copies in flight; call 166's Nsight Compute
# profiles showed its programs waiting on each item's copies). GPU tests of every shape it
# offers, then the sweep of the new configs on call 157's plan (resumable: the
# num_stages=2 rows are kept).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "halo_wgrad_configs and wgrad_grouped_flat"
P=resnext50_32x4d,random_train:0:40,random_train:3:40
step sweep_flat $((560 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_grouped_flat --out data/sweeps/h100/bwd_wgrad.csv --rep-ms 5 \
  --warmup-ms 2 --jobs 14 --dtype float16 --quiet
