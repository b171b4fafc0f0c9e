#!/usr/bin/env bash
# Device call 40 (2026-11-24, eighth session): the issue-2 suite with the rule chooser
# after `choosers.tma_pays` (1x1 stride-1 layers with more than 32 input channels go to
# pointwise_tma first).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bench_rule $((560 - SECONDS)) python3 -m convdispatch.validation.bench_layers --suite issue2 \
  --chooser rule --rep-ms 10 --out "$RES/issue2_rule"
