#!/usr/bin/env bash
# Device call 58 (2026-11-24, twelfth session): feature schema v14 (wgrad_grouped_taps)
# with every model retrained (the forward model again picks what a41fd4888219 picked on
# the 246 issue-6/issue-2 layers): the backward benchmark with the models choosing.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_model 300 python3 -m convdispatch.validation.bench_backward --suite issue2 \
  --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
