#!/usr/bin/env bash
# Device call 199 (2026-11-27, thirty-third session): both gradients of the stride-1
# grouped layers in one kernel (backward_grouped_flat) against the chosen pair, fp16 and
# bf16; and the rewritten GPU dependent-launch tests.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step fused_fp16 300 python3 validation/gpu/probe_fused_backward.py "$RES/fused_fp16.csv" float16
step fused_bf16 150 python3 validation/gpu/probe_fused_backward.py "$RES/fused_bf16.csv" bfloat16
step gpu_dependent 100 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -x -q tests/test_gpu_dependent.py
