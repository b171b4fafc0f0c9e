#!/usr/bin/env bash
# Device call 283 (2026-11-28, forty-fifth session): grouped_flat's WGMMA tiles (each tap
# warpgroup mmas reading the shifted rows and the filter tile from shared memory) swept on
# both plans; the family's other rows are kept, so only the new configs are measured
# (each checked against torch before it is timed). Resumable.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
sweep holdout 150 grouped_flat
sweep train $((585 - SECONDS)) grouped_flat
