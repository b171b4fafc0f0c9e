#!/usr/bin/env bash
# Device call 180 (2026-11-27, thirty-first session): the benchmarks again with the
# flat-grid copy runs (call 176) and the gradient models retrained on their rows (the
# forward model is the thirtieth session's): the issue-2 backward suite, one whole pass,
# and the issue-6 forward suite in fp16.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_full 150 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
step issue6_fp16 $((575 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
