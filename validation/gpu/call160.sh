#!/usr/bin/env bash
# Device call 160 (2026-11-26, twenty-ninth session): grouped_flat with the ITEMS knob (2, 4
# or 8 items a program: call 159 shared items out by a fixed rule and still lost to
# grouped_packed on the 32-channel groups), its filter tiles in shared memory without
# padding to a power of two and loaded in runs of 8 channels. GPU tests, then the sweeps
# of dgrad_grouped_flat (gradient problems) and grouped_flat (forward holdout plan); the
# train plan follows in call 161. Call 159's rows of these families were not kept.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py tests/test_gpu_grad.py -m gpu \
  -k "grouped_flat or (real_shapes and grouped and dgrad)"
step sweep_dgrad 170 convdispatch sweep --direction dgrad --families dgrad_grouped_flat \
  --problems resnext50_32x4d,random_train:0:40,random_train:3:40 --dtype float16 \
  --out data/sweeps/h100/bwd_dgrad.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
step sweep_holdout $((575 - SECONDS)) convdispatch sweep --families grouped_flat \
  --problems holdout --out data/sweeps/h100/holdout.csv --rep-ms 5 --warmup-ms 2 --jobs 14 \
  --quiet
