#!/usr/bin/env bash
# Device call 61 (2026-11-24, thirteenth session): the persistent TMA families
# (pointwise_tma_persistent, implicit_gemm_tma_persistent: the same tiles as
# pointwise_tma / implicit_gemm_tma, a grid of 1-2 programs an SM walking the tiles with
# the next tile's loads issued before the last tile's store). GPU tests of both on real
# shapes (fp16), then their forward sweep on every network where the one-tile families
# were swept (train: resnet50, vgg16, unet, video3d, mobilenet_v2, regnet; holdout:
# sd_vae, resnext50_32x4d).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
F=pointwise_tma_persistent,implicit_gemm_tma_persistent
step gpu_tests 75 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_pointwise_tma.py tests/test_implicit_gemm_tma.py -k "gpu and persistent and float16"
step sweep_train 330 convdispatch sweep --problems resnet50,vgg16,unet,video3d,mobilenet_v2,regnet \
  --families $F --out data/sweeps/h100/train.csv $S
step sweep_holdout $((580 - SECONDS)) convdispatch sweep --problems sd_vae,resnext50_32x4d \
  --families $F --out data/sweeps/h100/holdout.csv $S
