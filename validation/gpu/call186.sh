#!/usr/bin/env bash
# Device call 186 (2026-11-27, thirty-second session): flat-grid copy runs of 16 positions
# against 32 (stride-2 and 7x7 items copy up to 20% fewer phase positions) on the
# grouped layers' best flat candidates of each direction (probe_copy_run.py).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step probe 540 python3 validation/gpu/probe_copy_run.py "$RES/copy_run.csv" 2
