#!/usr/bin/env bash
# Device call 82 (2026-11-24, sixteenth session): what the split families' separate
# reduction pass costs (probe_split_reduce.py on the split configs chosen in the issue-6
# float16 run of call 70 and the backward run of call 79), then the issue-6 suite in
# float16 with the forward model retrained on call 81's narrow-box rows.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step split_reduce 150 python3 validation/gpu/probe_split_reduce.py \
  validation/results/issue6_h100/bench.csv \
  validation/results/issue7_h100/call79/bwd_issue2_model/bench.csv "$RES/split_reduce.csv"
step issue6_fp16 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
