#!/usr/bin/env bash
# Device call 35 (2026-11-23, eighth session): the last train problems of the re-sweep
# (calls 32-34), then a second run of the issue-2 suite with the rule chooser (rule orders
# of the changed families rebuilt from the complete train plan) to see how far the grouped geomean moves
# between runs.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
F=grouped_packed,implicit_gemm,grouped_gemm,splitk
step sweep_train 300 convdispatch sweep --problems train --families $F \
  --out data/sweeps/h100/train.csv $S
step rule_order 60 python3 -m convdispatch.dispatcher.rule_order --only $F data/sweeps/h100/train.csv
cp dispatcher/rule_order.json "$RES/"
step bench_rule $((575 - SECONDS)) python3 -m convdispatch.validation.bench_layers --suite issue2 \
  --chooser rule --rep-ms 10 --out "$RES/issue2_rule"
