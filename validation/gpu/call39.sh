#!/usr/bin/env bash
# Device call 39 (2026-11-24, eighth session): feature schema v9 (the pointwise_tma family)
# and every model retrained: the issue-2 and issue-6 suites with the forward model, then
# the backward benchmark with the gradient models.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bench_model 150 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser model \
  --topk 2 --rep-ms 10 --out "$RES/issue2_model"
step issue6_model 190 python3 -m convdispatch.validation.bench_layers --suite issue6 \
  --chooser model --rep-ms 5 --out "$RES/issue6_model"
step bench_bwd_model $((570 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
