#!/usr/bin/env bash
# Device call 267 (2026-11-27, forty-first session): one backward pass of the issue-6
# suite's 21 grouped layers, twice, under the dgrad model retrained on the 16-byte-store
# rows (4395822a241b; call 225 ran the same suite under 285a2e254131).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
for i in 1 2; do
  step bwd_full_grouped6_$i $((200 - SECONDS)) python3 -m \
    convdispatch.validation.bench_backward --suite issue6 --chooser model --rep-ms 5 \
    --directions full --categories grouped --out "$RES/bwd_full_grouped6_$i"
done
