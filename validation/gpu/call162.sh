#!/usr/bin/env bash
# Device call 162 (2026-11-26, twenty-ninth session): the three flat-grid families chosen by
# the retrained models (feature schema v20: forward 42a376052f30, dgrad 3317ada1d05b, wgrad
# fe76ec80b557): one whole backward pass of the issue-2 suite as in call 156, one pass of
# the issue-6 suite's grouped layers, and the issue-6 forward suite in fp16 (the forward
# model's retrain changed 25 of its 246 choices, dense ones among them, so call 139's
# numbers no longer stand for it).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_full 150 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
step bwd_full_grouped6 110 python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped6"
step issue6_fp16 $((580 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
