#!/usr/bin/env bash
# Device call 164 (2026-11-26, twenty-ninth session): dgrad and wgrad of the issue-2
# suite's grouped layers each alone, with top-2 (the flat families chosen by the retrained
# gradient models; call 162 timed one whole pass).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_grouped $((150 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions dgrad,wgrad \
  --categories grouped --out "$RES/bwd_grouped"
