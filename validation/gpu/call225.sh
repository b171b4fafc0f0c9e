#!/usr/bin/env bash
# Device call 225 (2026-11-27, thirty-sixth session): the issue-6 grouped layers' backward
# pass four more times on the shipped models (call 222: six runs, 1.503-1.556x), since
# cuDNN's time moves between runs.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
for i in 6 7 8 9; do
  step bwd_full_grouped6_$i $((250 - SECONDS)) python3 -m \
    convdispatch.validation.bench_backward --suite issue6 --chooser model --rep-ms 5 \
    --directions full --categories grouped --out "$RES/bwd_full_grouped6_$i"
done
