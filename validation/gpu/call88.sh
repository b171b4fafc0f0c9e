#!/usr/bin/env bash
# Device call 88 (2026-11-24, seventeenth session): the issue-6 suite in float16 and
# bfloat16 with the forward model retrained on calls 86 and 87 (implicit_gemm_tma's phase
# boxes for strided 3D and odd-sized inputs, grouped_packed's split-K configs) and the
# guard that ships on ties.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step issue6_fp16 240 python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
step issue6_bf16 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --dtype bfloat16 --out "$RES/issue6_bf16"
