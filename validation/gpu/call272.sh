#!/usr/bin/env bash
# Device call 272 (2026-11-28, forty-second session): one backward pass of the issue-6
# grouped layers under dgrad model 30406f020844, twice more (call 270 ran it once).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
for i in 1 2; do
  step bwd_full_grouped6_$i $((260 - SECONDS)) python3 -m \
    convdispatch.validation.bench_backward --suite issue6 --chooser model --rep-ms 5 \
    --directions full --categories grouped --out "$RES/bwd_full_grouped6_$i"
done
