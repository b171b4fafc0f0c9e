#!/usr/bin/env bash
# Device call 176 (2026-11-27, thirty-first session): the three flat-grid families copy
# only the phase positions a tap reads (flat_grid.copy_runs: XCOPY = P + the largest tap
# shift rounded up to 32, in power-of-two runs, against the whole power-of-two XP, which
# zero-filled up to 38% of every phase image). GPU tests of the three families, then their
# rows swept again (retired locally into *.retired.csv): wgrad, dgrad, holdout, train.
# The sweeps are resumable; call 177 finishes what this one leaves.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_families.py -m gpu -k "(halo_wgrad_configs and \
wgrad_grouped_flat and (cg32_7x7 or cg8_s2_bf16 or cg16_dilated_odd or cg8_s3_dilated)) or \
(grouped_flat_configs and (cg32_7x7 or cg4_56x56 or cg8_s3x2)) or \
(real_shapes and grouped_cg and dgrad)"
P=resnext50_32x4d,random_train:0:40,random_train:3:40
SW="--rep-ms 5 --warmup-ms 2 --jobs 14 --quiet"
step sweep_wgrad 170 convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_grouped_flat --dtype float16 --out data/sweeps/h100/bwd_wgrad.csv $SW
step sweep_dgrad 90 convdispatch sweep --direction dgrad --families dgrad_grouped_flat \
  --problems $P --dtype float16 --out data/sweeps/h100/bwd_dgrad.csv $SW
step sweep_holdout 60 convdispatch sweep --families grouped_flat --problems holdout \
  --out data/sweeps/h100/holdout.csv $SW
step sweep_train $((575 - SECONDS)) convdispatch sweep --families grouped_flat \
  --problems train --out data/sweeps/h100/train.csv $SW
