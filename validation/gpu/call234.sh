#!/usr/bin/env bash
# Device call 234 (2026-11-27, thirty-eighth session): forward rows measured again for two
# changes: problems whose filter has taps that read only padding (the forward dispatch now
# runs them without those taps: kernels/dead_taps.py) and grouped_flat (2D 16-channel
# filter tiles held in registers for all of a program's items). Then both changes timed
# on and off in one process (validation/gpu/probe_taps_regs.py).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S=data/sweeps/h100
step retire 60 python3 -m convdispatch.cli retire --dead-taps --families grouped_flat \
  $S/train.csv $S/holdout.csv
for set in train holdout; do
  step "sweep_$set" 240 convdispatch sweep --direction forward --problems $set \
    --out $S/$set.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
done
step probe 180 python3 validation/gpu/probe_taps_regs.py "$RES/probe_taps_regs.csv"
