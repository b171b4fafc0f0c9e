#!/usr/bin/env bash
# Device call 90 (2026-11-24, eighteenth session): the issue-6 suite in float16 and
# bfloat16 and the backward suite's dgrad half with the forward and dgrad models
# retrained on call 89's rows (ResNeXt-101's grouped 3x3s, grouped_rows' 16-row tiles);
# then the four holdout rows call 89's sweep did not reach.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step issue6_fp16 190 python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
step issue6_bf16 190 python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --dtype bfloat16 --out "$RES/issue6_bf16"
step bwd_dgrad 150 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions dgrad --out "$RES/bwd_dgrad"
step sweep_holdout $((585 - SECONDS)) convdispatch sweep --direction forward \
  --families grouped_rows --problems holdout --out data/sweeps/h100/holdout.csv \
  --rep-ms 5 --warmup-ms 2 --jobs 15 --quiet
