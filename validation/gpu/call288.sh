#!/usr/bin/env bash
# Device call 288 (2026-11-28, forty-sixth session; the device tool lent an H200, not the
# H100 the sweeps were measured on): grouped_flat's phase images at their copied length
# against their power-of-two allocation, config by config, on the issue-6 suite's 21
# grouped layers in float16 (validation/gpu/probe_exact_phases.py).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step exact_phases 570 python3 validation/gpu/probe_exact_phases.py "$RES/exact_phases.csv" \
  float16 12
