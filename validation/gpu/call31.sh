#!/usr/bin/env bash
# Device call 31 (2026-11-23, seventh session), models retrained on feature schema v8
# (the L1_TAPS knob; forward 3cf939976180): the issue-2 and issue-6 suites with the
# model, then the backward benchmark with the retrained gradient models.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bench_model 110 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser model \
  --topk 2 --rep-ms 10 --out "$RES/issue2_model"
step issue6_model 200 python3 -m convdispatch.validation.bench_layers --suite issue6 \
  --chooser model --rep-ms 5 --out "$RES/issue6_model"
step bench_bwd_model $((560 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
