#!/usr/bin/env bash
# Device call 62 (2026-11-24, thirteenth session): implicit_gemm_tma and its persistent
# twin on strided 2D layers (phase boxes of [N, H/s, s, W/s, s*C]): GPU tests of the
# strided cases, both families' forward sweep on the networks with strided dense layers
# (train: resnet50, regnet, unet; holdout: resnext50_32x4d; the sweep measures only the
# rows it lacks), then the persistent families' GPU tests again after call 61's failures
# (a fused residual's tile did not fit beside the pipeline: such calls now run the
# one-tile kernel).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
F=implicit_gemm_tma,implicit_gemm_tma_persistent
step gpu_tests_strided 90 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_implicit_gemm_tma.py -k "gpu and float16-0.01 and 56x56 and (128 or 512)"
step sweep_train 200 convdispatch sweep --problems resnet50,regnet,unet \
  --families $F --out data/sweeps/h100/train.csv $S
step sweep_holdout 100 convdispatch sweep --problems resnext50_32x4d \
  --families $F --out data/sweeps/h100/holdout.csv $S
step gpu_tests_persistent $((580 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_pointwise_tma.py tests/test_implicit_gemm_tma.py \
  -k "gpu and persistent"
