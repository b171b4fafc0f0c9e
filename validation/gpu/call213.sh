#!/usr/bin/env bash
# Device call 213 (2026-11-27, thirty-fourth session): after call 212, a pair of kernels
# that each fill the GPU alone runs at once below autograd.IN_ORDER_FLOPS. One backward
# pass of the issue-6 suite's grouped layers and of the issue-2 suite.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_full_grouped6 200 python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped6"
step bwd_full $((585 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
