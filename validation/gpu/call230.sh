#!/usr/bin/env bash
# Device call 230 (2026-11-27, thirty-seventh session): the forward sweep rows whose timing
# was disturbed (P80 / P20 above 1.5: 80 rows, 42 of them call 229's grouped_packed rows),
# retired with `convdispatch retire --max-spread 1.5`, measured again.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
for set in holdout train; do
  step "sweep_${set}" $((400 - SECONDS)) convdispatch sweep --direction forward \
    --problems "$set" --out "data/sweeps/h100/${set}.csv" \
    --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
done
