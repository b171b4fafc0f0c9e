#!/usr/bin/env bash
# Device call 70 (2026-11-24, thirteenth session): the issue-6 suite in float16 again
# with the model of call 69 (d0a55ced16f9): call 69's float16 run timed one layer
# (MobileNetV2 features.7.conv.2 at batch 32) at 13.8 us whose top-k re-timing of the same
# config gave 7.9 us, a disturbed measurement.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step issue6_fp16 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
