#!/usr/bin/env bash
# Device call 280 (2026-11-28, forty-fourth session): grouped_packed with a bulk L2
# prefetch of its tile's input rows (prefetch_rows; PREFETCH_ROWS rows a prefetch) against
# without, on the issue-6 grouped layers where call 279's model chose grouped_packed.
# (It ran with l2_prefetch.patch applied and the probe in validation/gpu/; both now lie in
# validation/results/flat_filter_vectors_h100/: slower on every layer, not kept.)
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
B=validation/results/flat_filter_vectors_h100/call279/issue6_fp16/bench.csv
step prefetch4_fp16 150 python3 validation/gpu/probe_prefetch.py "$B" "$RES/prefetch4_fp16.csv" 4
step prefetch32_fp16 $((270 - SECONDS)) python3 validation/gpu/probe_prefetch.py "$B" \
  "$RES/prefetch32_fp16.csv" 32
