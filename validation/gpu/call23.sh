#!/usr/bin/env bash
# Device call 23 (2026-11-23, fifth session): the forward model retrained on the
# completed sweeps and the RegNet set, shipped with its guard (c5559ad6eb4a): the
# issue-2 and issue-6 layer suites with it choosing, then the train sweep resumed with
# the time left.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step bench_model 120 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser model \
  --topk 2 --rep-ms 10 --out "$RES/issue2_model"
step issue6_model 300 python3 -m convdispatch.validation.bench_layers --suite issue6 --chooser model \
  --rep-ms 5 --out "$RES/issue6_model"
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
step sweep_train $((560 - SECONDS)) convdispatch sweep --problems train --out data/sweeps/h100/train.csv $S
