#!/usr/bin/env bash
# Device call 116 (2026-11-24, twenty-second session): the backward suite's dgrad half with
# the dgrad model retrained on call 115's rows (45fba1ffd36b): grouped dgrad reading the
# stored filter in place.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_dgrad 240 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions dgrad --out "$RES/bwd_dgrad"
