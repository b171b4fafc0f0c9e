#!/usr/bin/env bash
# Device call 143 (2026-11-25, twenty-fifth session): the backward suite with the wgrad
# model retrained on wgrad_grouped_halo's rows of call 142 (7775552f9d58): the wgrad half (top-2)
# and one whole backward pass (dX and dW).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_wgrad 260 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions wgrad --out "$RES/bwd_wgrad"
step bwd_full $((580 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
