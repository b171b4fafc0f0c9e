#!/usr/bin/env bash
# Device call 296 (2026-11-28, forty-sixth session, an H200): call 293 in bfloat16 (every
# WGMMA config of the 2D grouped layers, TMA prototype against shipped, two buffers).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step flat_tma_2d_all_bf16 150 python3 validation/gpu/probe_flat_tma.py \
  validation/results/grouped_stages_h200/stage_configs.csv "$RES/flat_tma_2d_all_bf16.csv" \
  --all --2d --bf16
