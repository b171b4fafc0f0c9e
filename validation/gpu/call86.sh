#!/usr/bin/env bash
# Device call 86 (2026-11-24, seventeenth session): implicit_gemm_tma's phase boxes for
# strided 3D convs (frames of every image one axis) and for inputs that are not whole
# strides (SD-VAE's 257/129/65-wide downsamplers). GPU tests of those cases, then the
# sweep of both box families over the train and holdout plans (only the problems they
# newly support have rows to add).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --quiet"
step gpu_tests 240 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_implicit_gemm_tma.py -m gpu -k "phase or compiles"
step sweep_train 150 convdispatch sweep --direction forward \
  --families implicit_gemm_tma,implicit_gemm_tma_persistent --problems train --out data/sweeps/h100/train.csv $S
step sweep_holdout $((585 - SECONDS)) convdispatch sweep --direction forward \
  --families implicit_gemm_tma,implicit_gemm_tma_persistent --problems holdout --out data/sweeps/h100/holdout.csv $S
