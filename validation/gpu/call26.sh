#!/usr/bin/env bash
# Device call 26 (2026-11-23, sixth session): with the depthwise_span family and the rule
# that prefers it for large 16-bit depthwise layers, the issue-2 layer suite under the
# rule chooser; then the train sweep resumed (its last problems, and the span rows of
# three large problems that ran out of memory in call 25, now retried alone).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step bench_rule 110 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser rule \
  --rep-ms 10 --out "$RES/issue2_rule"
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
step sweep_train $((550 - SECONDS)) convdispatch sweep --problems train --out data/sweeps/h100/train.csv $S
