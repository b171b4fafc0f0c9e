#!/usr/bin/env bash
# Device call 247 (2026-11-27, thirty-ninth session): grouped_flat's items a program,
# every tile of the family on the issue-6 grouped layers over ITEMS 1..32
# (validation/gpu/probe_flat_items.py).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step flat_items 540 python3 validation/gpu/probe_flat_items.py "$RES/flat_items.csv" float16
