#!/usr/bin/env bash
# Device call 206 (2026-11-27, thirty-fourth session): after call 205's sweeps of the 3D
# flat-grid kernels and the models retrained on them. The GPU tests call 205 left unrun
# (its step's time ran out: the 3D gradient cases, the fused backward kernel), then one
# backward pass of the issue-6 suite's grouped layers (ResNeXt-50 at batch 32, ResNeXt3D-50
# at batch 1 and 8) and of the issue-2 suite (every category).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  tests/test_gpu_grad.py -k "grouped3d or 3d" tests/test_gpu_fused_backward.py
step bwd_full_grouped6 130 python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped6"
step bwd_full $((585 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
