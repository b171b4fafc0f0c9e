#!/usr/bin/env bash
# Device call 10 (2026-11-23): GPU tests of the gradient families (packed ones added),
# the dgrad sweep resumed (adds the dgrad_packed rows), and the wgrad sweep.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
save_bwd() { mkdir -p "$RES/sweeps"; cp data/sweeps/h100/bwd_* "$RES/sweeps/" 2>/dev/null; pack; }
trap save_bwd EXIT
export CONVDISPATCH_GPU_TESTS=1
step gpu_grad_tests 100 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_grad.py
for d in dgrad wgrad; do
  step sweep_$d $([ $d = dgrad ] && echo 120 || echo 330) convdispatch sweep --direction $d \
    --problems resnet50,resnext50_32x4d,mobilenet_v2 --dtype float16 \
    --out data/sweeps/h100/bwd_$d.csv --rep-ms 5 --warmup-ms 2 --jobs 15
done
