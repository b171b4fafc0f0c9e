#!/usr/bin/env bash
# Device call 152 (2026-11-26, twenty-eighth session): one backward pass of the grouped
# and depthwise layers twice more with the shipped models (is call 150's depthwise 1.56x
# more than one run's cuDNN times?), and the depthwise wgrad half with the rule chooser,
# which now puts wgrad_depthwise_span first from 2^18 elements of dY.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
for run in 1 2; do
  step "bwd_full_$run" 150 python3 -m convdispatch.validation.bench_backward \
    --suite issue2 --chooser model --rep-ms 5 --directions full \
    --categories grouped,depthwise --out "$RES/bwd_full_$run"
done
step bwd_wgrad_rule 120 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser rule --rep-ms 5 --directions wgrad --categories depthwise \
  --out "$RES/bwd_wgrad_rule"
