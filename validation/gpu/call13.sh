#!/usr/bin/env bash
# Device call 13 (2026-11-23, third session): resume call 12's sweeps, holdout first
# (the problems the holdout plan still lacks), then the added random train problems.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
step sweep_holdout 170 convdispatch sweep --problems holdout --out data/sweeps/h100/holdout.csv $S
step sweep_train $((560 - SECONDS)) convdispatch sweep --problems train --out data/sweeps/h100/train.csv $S
