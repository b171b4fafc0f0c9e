#!/usr/bin/env bash
# Device call 54 (2026-11-24, twelfth session): feature schema v13 (wgrad_depthwise_rows)
# with every model retrained (the forward model picks what a41fd4888219 picked on all 246
# issue-6/issue-2 layers): the backward benchmark with the models choosing, then
# wgrad_depthwise_rows variants outside its space (SPLIT_K=1024, 8 output rows an item)
# on MobileNetV2's depthwise layers.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_model 260 python3 -m convdispatch.validation.bench_backward --suite issue2 \
  --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
step probe $((585 - SECONDS)) python3 validation/gpu/probe_dw_wgrad.py bench \
  "$RES/probe_variants.csv" split1024,rows8 2
