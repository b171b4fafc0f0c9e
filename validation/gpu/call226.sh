#!/usr/bin/env bash
# Device call 226 (2026-11-27, thirty-seventh session): serial split-K (SERIAL=1: a split
# launch's last program of a tile adds the slices, no reduce pass). The GPU tests of the
# serial configs, then their sweep rows (resumable: only the new SERIAL configs run):
# grouped_packed on the train and holdout sets, then splitk on holdout and train.
# Run with validation/results/serial_split_h100/serial_split.patch applied (not kept).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -W error::RuntimeWarning \
  -p no:cacheprovider tests/test_gpu_serial_split.py
for fam_set in grouped_packed:train grouped_packed:holdout splitk:holdout splitk:train; do
  fam=${fam_set%%:*}; set=${fam_set##*:}
  left=$((575 - SECONDS))
  [ "$left" -gt 20 ] || break
  step "sweep_${fam}_${set}" "$left" convdispatch sweep --direction forward --problems "$set" \
    --families "$fam" --out "data/sweeps/h100/${set}.csv" --rep-ms 5 --warmup-ms 2 \
    --jobs 14 --quiet
done
