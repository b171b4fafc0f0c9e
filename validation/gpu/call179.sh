#!/usr/bin/env bash
# Device call 179 (2026-11-27, thirty-first session): grouped_flat and its dgrad twin with
# 32-wide packs of small groups reduced in their two 16-wide diagonal blocks
# (grouped_flat.sub_tile: 64-byte copy runs a pixel and conflict-free planes, the mma work
# of two 16-wide tiles; call 177 found 70% of the copies' shared-memory wavefronts excess
# at 32 bytes a pixel). GPU tests of both, then the new configs swept (forward: holdout and
# train plans; dgrad): the other rows stand (their PTX is unchanged, checked on the CPU).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_families.py -m gpu -k "(grouped_flat_configs and \
(cg4_56x56 or cg8_s3x2)) or (real_shapes and (grouped_cg4 or grouped_cg8_s2) and dgrad)"
P=resnext50_32x4d,random_train:0:40,random_train:3:40
SW="--rep-ms 5 --warmup-ms 2 --jobs 14 --quiet"
step sweep_dgrad 100 convdispatch sweep --direction dgrad --families dgrad_grouped_flat \
  --problems $P --dtype float16 --out data/sweeps/h100/bwd_dgrad.csv $SW
step sweep_holdout 80 convdispatch sweep --families grouped_flat --problems holdout \
  --out data/sweeps/h100/holdout.csv $SW
step sweep_train $((575 - SECONDS)) convdispatch sweep --families grouped_flat \
  --problems train --out data/sweeps/h100/train.csv $SW
