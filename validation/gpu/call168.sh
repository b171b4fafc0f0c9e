#!/usr/bin/env bash
# Device call 168 (2026-11-26, thirtieth session): the flat-grid Gluon families with their
# phase images in planes of 8 channels (flat_grid.planar_layout: ldmatrix's rows 16
# contiguous bytes; call 166 measured 2- and 4-way bank conflicts on half and three
# quarters of the shared loads) and grouped_flat's filter tiles swizzled. GPU tests of the
# three families, then wgrad_grouped_flat swept again on call 157's plan (its earlier rows
# retired locally: bwd_wgrad.retired.csv).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 220 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_families.py -m gpu -k "(halo_wgrad_configs and \
wgrad_grouped_flat and (cg32_7x7 or cg8_s2_bf16 or cg16_dilated_odd)) or (grouped_flat_configs \
and (cg32_7x7 or cg4_56x56)) or (real_shapes and grouped_cg and dgrad)"
P=resnext50_32x4d,random_train:0:40,random_train:3:40
step sweep_flat $((570 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_grouped_flat --out data/sweeps/h100/bwd_wgrad.csv --rep-ms 5 \
  --warmup-ms 2 --jobs 14 --dtype float16 --quiet
