#!/usr/bin/env bash
# Device call 294 (2026-11-28, forty-sixth session, an H200): the TMA prototype extended
# to 3D (a step a depth tap; 5D boxes): each layer's fastest WGMMA configs of call 288 on
# all 21 grouped layers against the shipped kernel (two buffers), then every WGMMA config
# of the 3D layers (validation/gpu/probe_flat_tma.py).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step flat_tma 200 python3 validation/gpu/probe_flat_tma.py \
  validation/results/grouped_stages_h200/stage_configs.csv "$RES/flat_tma.csv" 2
step flat_tma_3d_all $((500 - SECONDS)) python3 validation/gpu/probe_flat_tma.py \
  validation/results/grouped_stages_h200/stage_configs.csv "$RES/flat_tma_3d_all.csv" \
  --all --3d
