#!/usr/bin/env bash
# Device call 110 (2026-11-24, twentieth session): the benchmarks with the shipped models
# retrained on calls 106-109's complete rows: the backward suite's dgrad half (dgrad
# model 7036cd4373e3) and the issue-6 forward suite in fp16 and bf16 (forward model
# retrained for depthwise_span's new schedule).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_dgrad 130 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions dgrad --out "$RES/bwd_dgrad"
step issue6_fp16 210 python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
step issue6_bf16 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --dtype bfloat16 --out "$RES/issue6_bf16"
