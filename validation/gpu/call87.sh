#!/usr/bin/env bash
# Device call 87 (2026-11-24, seventeenth session): the GPU tests of implicit_gemm_tma's
# new phase boxes (strided 3D, inputs that are not whole strides; call 86's test step
# stopped at a typo) and of grouped_packed's new split-K configs, then the sweep of
# grouped_packed over the train and holdout plans (only the split configs have rows to
# add).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --quiet"
step gpu_tests 240 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_implicit_gemm_tma.py tests/test_grouped_packed.py -m gpu -k "phase or compiles or split"
step sweep_train 180 convdispatch sweep --direction forward \
  --families grouped_packed --problems train --out data/sweeps/h100/train.csv $S
step sweep_holdout $((585 - SECONDS)) convdispatch sweep --direction forward \
  --families grouped_packed --problems holdout --out data/sweeps/h100/holdout.csv $S
