#!/usr/bin/env bash
# Device call 103 (2026-11-24, nineteenth session): the backward suite's wgrad half with the
# wgrad model retrained on call 102's rows (wgrad_staged_tma's SPLIT_K=3 and 8).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_wgrad 300 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions wgrad --out "$RES/bwd_wgrad"
