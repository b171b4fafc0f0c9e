#!/usr/bin/env bash
# Device call 27 (2026-11-23, sixth session): the forward model retrained with the
# depthwise_span rows (dfd88da9ff67, feature schema v7): the issue-2 layer suite with
# the model choosing, then the issue-6 suite.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bench_model 110 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser model \
  --topk 2 --rep-ms 10 --out "$RES/issue2_model"
step issue6_model $((560 - SECONDS)) python3 -m convdispatch.validation.bench_layers --suite issue6 \
  --chooser model --rep-ms 5 --out "$RES/issue6_model"
