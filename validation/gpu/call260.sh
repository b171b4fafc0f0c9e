#!/usr/bin/env bash
# Device call 260 (2026-11-27, fortieth session): grouped_packed's tap steps split in 2 or
# 3 runs (PACKED_TAP_SPLIT_TILES x TAP_SPLITS) swept on both plans (the rows already there
# are kept; each row is checked against torch). Run with
# validation/results/tap_steps_h100/call260/tap_split.patch applied to 79da83c; not kept:
# its rows are in that folder, the CSVs were restored.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
sweep holdout 90 grouped_packed
sweep train 150 grouped_packed
