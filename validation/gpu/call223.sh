#!/usr/bin/env bash
# Device call 223 (2026-11-27, thirty-sixth session): with the backward model c4f8b4deab60
# deciding whether passes fuse: the fused pass's GPU tests through autograd (eager, replayed,
# captured; 2D and 3D), then the small ResNeXt training check in float32 (no fused kernel:
# it takes 16-bit only) and in bfloat16 (its grouped 3x3s' passes are the model's choice).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -W error::RuntimeWarning \
  tests/test_gpu_fused_backward.py -k "eager_replayed or 3d_cg4 or cg8_s2"
step train_check_fp32 130 python3 -m convdispatch.validation.train_check --steps 30 \
  --out "$RES/train_check_fp32"
step train_check_bf16 $((400 - SECONDS)) python3 -m convdispatch.validation.train_check \
  --steps 30 --dtype bfloat16 --out "$RES/train_check_bf16"
