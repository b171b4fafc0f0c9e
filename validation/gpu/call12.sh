#!/usr/bin/env bash
# Device call 12 (2026-11-23, third session): the 180 random train problems added to the
# train plan (seeds 3-5, fp16/bf16/fp32) and the 7 holdout problems the holdout plan still
# lacked. Resumable: a cut run is resumed by the same command.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step sweep_train ${TRAIN_S:-470} convdispatch sweep --problems train --out data/sweeps/h100/train.csv \
  --rep-ms 5 --warmup-ms 2 --jobs 15
step sweep_holdout $((565 - SECONDS)) convdispatch sweep --problems holdout \
  --out data/sweeps/h100/holdout.csv --rep-ms 5 --warmup-ms 2 --jobs 15
