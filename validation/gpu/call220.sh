#!/usr/bin/env bash
# Device call 220 (2026-11-27, thirty-sixth session): the fused backward kernel in 3D (one
# program: all of an input depth slice's depth taps). Its GPU tests, the backward sweep of
# ResNeXt3D-50's grouped layers (resumable, into bwd_backward.csv), then the issue-6
# grouped layers' backward pass on the shipped models (the 3D configs still the 2D-trained
# backward model's picks).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -W error::RuntimeWarning \
  tests/test_gpu_fused_backward.py
step sweep_video3d 260 convdispatch sweep --direction backward --problems video3d \
  --out data/sweeps/h100/bwd_backward.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
step bwd_full_grouped6 $((560 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped6"
