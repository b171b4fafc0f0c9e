#!/usr/bin/env bash
# Device call 46 (2026-11-24, tenth session): feature schema v11 (implicit_gemm_tma, its
# dgrad twin, wgrad_implicit_gemm_tma) with every model retrained on the sweeps of calls
# 44-45: the issue-6 suite and the backward benchmark with the models choosing, then the
# issue-2 suite.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step issue6_model 200 python3 -m convdispatch.validation.bench_layers --suite issue6 \
  --chooser model --rep-ms 5 --out "$RES/issue6_model"
step bwd_model 230 python3 -m convdispatch.validation.bench_backward --suite issue2 \
  --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
step issue2_model $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue2 --chooser model --topk 2 --rep-ms 10 --out "$RES/issue2_model"
