#!/usr/bin/env bash
# Device call 252 (2026-11-27, thirty-ninth session): what call 251's time limits cut off:
# the issue-6 suite's video3d layers at batch 8 (float16; ResNeXt3D-50's layer3 and
# layer4 in bfloat16), same model and harness, and test_implicit_gemm_tma.py's last GPU
# cases (phase boxes, the persistent family's narrow boxes).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
suite issue6_fp16_rest 150 "" 'video3d/*/n8/*'
suite issue6_bf16_rest 90 bfloat16 'video3d/resnext3d_50.layer[34]*/n8/*'
step gpu_tests $((590 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider -rfE tests/test_implicit_gemm_tma.py -m gpu \
  -k "phase_boxes_match_torch or (narrow_boxes_match_torch and persistent)"
