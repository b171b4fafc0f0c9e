#!/usr/bin/env bash
# Device call 239 (2026-11-27, thirty-eighth session): grouped_flat's new configs of 16
# items a program (half the grid of the largest layers, whose programs now hold their
# filter tiles in registers), swept on both plans; the rows already there are kept.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
for set in train holdout; do
  step "sweep_$set" 240 convdispatch sweep --direction forward --problems $set \
    --families grouped_flat --out data/sweeps/h100/$set.csv --rep-ms 5 --warmup-ms 2 \
    --jobs 14 --quiet
done
