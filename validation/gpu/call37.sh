#!/usr/bin/env bash
# Device call 37 (2026-11-23, eighth session): the issue-2 and issue-6 suites with the
# forward model retrained on the re-swept rows (calls 32-36).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bench_model 150 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser model \
  --topk 2 --rep-ms 10 --out "$RES/issue2_model"
step issue6_model $((570 - SECONDS)) python3 -m convdispatch.validation.bench_layers --suite issue6 \
  --chooser model --rep-ms 5 --out "$RES/issue6_model"
