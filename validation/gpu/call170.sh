#!/usr/bin/env bash
# Device call 170 (2026-11-27, thirtieth session): the retrained models after the flat-grid
# families' 32-channel rows went into planes of 8 (calls 168-169). Issue-2 backward suite
# one whole pass, the issue-6 suite's grouped layers one whole pass, and the issue-6
# forward suite in fp16 (as call 162 ran them).
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
