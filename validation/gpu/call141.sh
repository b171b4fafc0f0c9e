#!/usr/bin/env bash
# Device call 141 (2026-11-25, twenty-fifth session): wgrad_grouped_halo with unpadded
# shared memory (a copy's rows rounded to whole warps, not to a power of two; ROWS=16
# added): its GPU tests, then its sweep over the gradient sweep's problems into a fresh
# CSV, to compare with call 136's rows of the padded version.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "halo or (grouped and wgrad)"
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step sweep_halo $((580 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_grouped_halo --out "$RES/halo_v2.csv" --rep-ms 5 --warmup-ms 2 \
  --jobs 14 --dtype float16 --quiet
