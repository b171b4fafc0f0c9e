#!/usr/bin/env bash
# Device call 136 (2026-11-25, twenty-fifth session): the registered wgrad_grouped_halo
# family (Gluon, halo rows in shared memory): its GPU tests and the grouped real-shape
# gradient tests, then its sweep over the gradient sweep's problems (resumable: only the
# new family's rows are measured, the others are kept).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "halo or (grouped and wgrad)"
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step sweep_halo $((580 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_grouped_halo --out data/sweeps/h100/bwd_wgrad.csv --rep-ms 5 \
  --warmup-ms 2 --jobs 14 --dtype float16 --quiet
