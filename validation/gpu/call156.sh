#!/usr/bin/env bash
# Device call 156 (2026-11-26, twenty-eighth session): the gradient models retrained with
# call 155's 3D grouped rows (dgrad a810db257968, wgrad 569e6bffb5d5; 6 of the issue-2
# suite's 126 choices differ from call 150's, all dense): the issue-2 backward suite as in
# call 150 (wgrad half with top-2, one whole pass), and one pass of the issue-6 suite's
# grouped layers as in call 154.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_wgrad 200 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions wgrad --out "$RES/bwd_wgrad"
step bwd_full 150 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
step bwd_full_grouped6 $((560 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped6"
