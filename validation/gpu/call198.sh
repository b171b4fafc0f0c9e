#!/usr/bin/env bash
# Device call 198 (2026-11-27, thirty-second session): the issue-2 suite's dense one
# backward pass after overlap_first (only ResNet-50 layer1.0.conv2 at batch 32 changes
# order: its wgrad is wgrad_implicit_gemm_tma).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_full 190 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full \
  --categories dense --out "$RES/bwd_full"
