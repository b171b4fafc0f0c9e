#!/usr/bin/env bash
# Device call 44 (2026-11-24, tenth session): implicit_gemm_tma (stride-1 channels_last
# implicit GEMM from 5D TMA boxes of the input) and its dgrad twin: the forward sweep on
# the networks with supported layers (train: resnet50, vgg16, unet, video3d; holdout:
# sd_vae), the dgrad twin's sweep on resnet50, then the GPU tests of the family.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
step sweep_train 240 convdispatch sweep --problems resnet50,vgg16,unet,video3d \
  --families implicit_gemm_tma --out data/sweeps/h100/train.csv $S
step sweep_holdout 120 convdispatch sweep --problems sd_vae \
  --families implicit_gemm_tma --out data/sweeps/h100/holdout.csv $S
step sweep_dgrad 120 convdispatch sweep --problems resnet50 --direction dgrad \
  --families dgrad_implicit_gemm_tma --out data/sweeps/h100/bwd_dgrad.csv $S
step gpu_tests $((585 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_implicit_gemm_tma.py -k gpu
