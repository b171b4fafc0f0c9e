#!/usr/bin/env bash
# Device call 281 (2026-11-28, forty-fourth session): one backward pass of the issue-6
# grouped layers again, unchanged from call 278: a second sample, and whether call 278's
# two far-off "in order" times (ResNeXt3D-50 layer4.0 and layer3.1 at batch 1) recur.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_full_grouped6 150 python3 -m convdispatch.validation.bench_backward --suite issue6 \
  --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped6"
