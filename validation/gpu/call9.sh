#!/usr/bin/env bash
# Device call 9 (2026-11-23): gradient kernels' GPU tests, then the dgrad sweep of the
# ResNet-50 / ResNeXt-50 / MobileNetV2 layers (fp16), resumable (call 10 goes on).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
save_bwd() { mkdir -p "$RES/sweeps"; cp data/sweeps/h100/bwd_* "$RES/sweeps/" 2>/dev/null; pack; }
trap save_bwd EXIT
export CONVDISPATCH_GPU_TESTS=1
step gpu_grad_tests 140 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_grad.py
step sweep_dgrad ${SWEEP_S:-380} convdispatch sweep --direction ${DIRECTION:-dgrad} \
  --problems resnet50,resnext50_32x4d,mobilenet_v2 --dtype float16 \
  --out data/sweeps/h100/bwd_${DIRECTION:-dgrad}.csv --rep-ms 5 --warmup-ms 2 --jobs 15
