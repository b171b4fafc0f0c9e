#!/usr/bin/env bash
# Device call 150 (2026-11-26, twenty-eighth session): the backward suite with the models
# retrained on feature schema v19 (wgrad_depthwise_span swept in calls 147-148; wgrad
# ae6cb096944f, dgrad e87edccdfb7f): the wgrad half (top-2) and one whole backward pass
# (dX and dW), as call 143. Call 149 ran the same steps in the twenty-seventh session,
# which was cut off before its results reached the tree: none of its numbers are quoted.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_wgrad 260 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions wgrad --out "$RES/bwd_wgrad"
step bwd_full $((580 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
