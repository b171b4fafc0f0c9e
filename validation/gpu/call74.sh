#!/usr/bin/env bash
# Device call 74 (2026-11-24, fourteenth session): the backward benchmark (issue-2 suite,
# fp16) with the dgrad model retrained on call 73's stride-phase rows (44beaf5859a4) and
# the shipped wgrad model choosing.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_model $((585 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
