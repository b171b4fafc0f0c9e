#!/usr/bin/env bash
# Device call 157 (2026-11-26, twenty-ninth session): the new wgrad_grouped_flat family
# (Gluon: items of output rows flattened on a zero-padded grid, the input copied once as
# stride-phase images, each tap one shifted slice of shared memory): its GPU tests beside
# wgrad_grouped_halo's and the grouped real-shape wgrad tests, then its sweep over the
# gradient sweep's grouped 2D problems (resumable: only the new family's rows are
# measured, the others are kept).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "halo_wgrad_configs or (real_shapes and grouped and wgrad)"
P=resnext50_32x4d,random_train:0:40,random_train:3:40
step sweep_flat $((570 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_grouped_flat --out data/sweeps/h100/bwd_wgrad.csv --rep-ms 5 \
  --warmup-ms 2 --jobs 14 --dtype float16 --quiet
