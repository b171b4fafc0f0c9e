#!/usr/bin/env bash
# Device call 113 (2026-11-24, twenty-first session): the backward suite's dgrad half
# with the dgrad model retrained on calls 111-112's rows (f38a206c3797): strided
# depthwise dgrad in one launch, strided grouped dgrad with one regrouped filter.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_dgrad 240 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions dgrad --out "$RES/bwd_dgrad"
