#!/usr/bin/env bash
# Device call 142 (2026-11-25, twenty-fifth session): wgrad_grouped_halo's rows measured
# again (call 136's were retired: shared memory no longer padded, ROWS=16, packs on 8
# bytes) into the gradient sweep, then the GPU tests of the family.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step sweep_halo 330 convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_grouped_halo --out data/sweeps/h100/bwd_wgrad.csv --rep-ms 5 \
  --warmup-ms 2 --jobs 14 --dtype float16 --quiet
step gpu_tests $((570 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_gpu_grad.py -m gpu -k "halo"
