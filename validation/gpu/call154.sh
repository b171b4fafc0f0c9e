#!/usr/bin/env bash
# Device call 154 (2026-11-26, twenty-eighth session): one backward pass of the issue-6
# suite's grouped layers (ResNeXt-50 at batch 32, ResNeXt3D-50 at batch 1 and 8),
# overlapped and in order: does running dX and dW at once lose wherever a grouped dgrad
# runs as stride phases, as on ResNeXt-50's layer3.0 and layer4.0 in calls 143-152?
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_full_grouped 300 python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped"
