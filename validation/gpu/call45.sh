#!/usr/bin/env bash
# Device call 45 (2026-11-24, tenth session): wgrad_implicit_gemm_tma (stride-1 filter
# gradients from one-row TMA boxes of dY and X) swept on the wgrad sets; the seven
# implicit_gemm_tma configs added after call 44 (BLOCK_K=128, 4-warp 128x128 tiles,
# 8-wide 128x256) swept forward and as the dgrad twin (resumable: only the new rows);
# then GPU tests of the gradient families on real shapes and of implicit_gemm_tma.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
step sweep_wgrad 150 convdispatch sweep --direction wgrad \
  --problems resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40 \
  --families wgrad_implicit_gemm_tma --out data/sweeps/h100/bwd_wgrad.csv $S
step sweep_train 150 convdispatch sweep --problems resnet50,vgg16,unet,video3d \
  --families implicit_gemm_tma --out data/sweeps/h100/train.csv $S
step sweep_holdout 90 convdispatch sweep --problems sd_vae \
  --families implicit_gemm_tma --out data/sweeps/h100/holdout.csv $S
step sweep_dgrad 90 convdispatch sweep --problems resnet50 --direction dgrad \
  --families dgrad_implicit_gemm_tma --out data/sweeps/h100/bwd_dgrad.csv $S
step gpu_tests_fwd 60 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_implicit_gemm_tma.py -k gpu_configs
step gpu_tests_grad $((585 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_gpu_grad.py \
  -k "real_shapes and (dense3x3 or dense5x5 or batch1_deep or conv3d)"
