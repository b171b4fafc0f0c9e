#!/usr/bin/env bash
# Device call 215 (2026-11-27, thirty-fifth session): the dgrad model 285a2e254131 (call
# 214's split configs of grouped_packed's dgrad twin) on the GPU. One backward pass of the
# issue-6 suite's grouped layers, of the issue-2 suite and of the whole issue-6 suite.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_full_grouped6 200 python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped6"
step bwd_full $((400 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
step bwd_full_issue6 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full_issue6"
