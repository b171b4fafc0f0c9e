#!/usr/bin/env bash
# Device call 292 (2026-11-28, forty-sixth session, an H200): grouped_flat's WGMMA kernel
# with its copies made by the tensor memory accelerator (2 and 3 buffers), checked against
# torch and timed against the shipped kernel, same config, on the issue-6 suite's 2D
# grouped layers (validation/gpu/probe_flat_tma.py).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step flat_tma 400 python3 validation/gpu/probe_flat_tma.py \
  validation/results/grouped_stages_h200/stage_configs.csv "$RES/flat_tma.csv" 2 3
