#!/usr/bin/env bash
# Device call 218 (2026-11-27, thirty-fifth session): the issue-6 grouped layers' backward
# pass again on the shipped models (calls 215 and 217 gave 1.475-1.535x, the spread
# mostly cuDNN's): each direction alone and the pass once, then the pass twice more.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_grouped6 220 python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions dgrad,wgrad,full \
  --categories grouped --out "$RES/bwd_grouped6"
for i in 2 3; do
  step bwd_full_grouped6_$i 100 python3 -m \
    convdispatch.validation.bench_backward --suite issue6 --chooser model --rep-ms 5 \
    --directions full --categories grouped --out "$RES/bwd_full_grouped6_$i"
done
