#!/usr/bin/env bash
# Device call 313 (2026-12-07, fiftieth session; an H100 again): grouped_flat's rows the
# H100 sweep CSVs lack (missing_rows.txt: 4008, TMA, 64-wide and one item a program with a
# buffer a depth tap) on both plans, and its 3D rows again (332, retired before the call
# with `convdispatch retire --families grouped_flat --dims 3`: measured before its filter
# copies became cp.async and its 32-wide tiles diagonal blocks, 1.13x and 1.03x a config on
# 3D layers on an H200). Rows already there are kept. Resumable. The CSVs are also left in
# out/sweeps (ignored, so kept on the warm machine) for call 314. SWEEP_END: the second
# of the script by which the train sweep stops (default 555).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
keep() { mkdir -p out/sweeps && cp data/sweeps/h100/{train,holdout}.{csv,meta.json} out/sweeps/; }
trap 'keep; save_sweeps' EXIT
sweep holdout 130 grouped_flat
sweep train $((${SWEEP_END:-555} - SECONDS)) grouped_flat
