#!/usr/bin/env bash
# Device call 34 (2026-11-23, eighth session): the re-sweep of calls 32-33 finished on the
# train plan, the rule chooser's config orders of the changed families rebuilt from it
# (`dispatcher/rule_order.py --only`, CPU work; the file comes back in $RES), then the
# issue-2 suite with the rule chooser (cuDNN and ours timed in alternating rounds).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
F=grouped_packed,implicit_gemm,grouped_gemm,splitk
step sweep_holdout 60 convdispatch sweep --problems holdout --families $F \
  --out data/sweeps/h100/holdout.csv $S
step sweep_train $((420 - SECONDS)) convdispatch sweep --problems train --families $F \
  --out data/sweeps/h100/train.csv $S
step rule_order 60 python3 -m convdispatch.dispatcher.rule_order --only $F data/sweeps/h100/train.csv
cp dispatcher/rule_order.json "$RES/"
step bench_rule $((575 - SECONDS)) python3 -m convdispatch.validation.bench_layers --suite issue2 \
  --chooser rule --rep-ms 10 --out "$RES/issue2_rule"
