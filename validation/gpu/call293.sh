#!/usr/bin/env bash
# Device call 293 (2026-11-28, forty-sixth session, an H200): call 292's TMA prototype on
# every WGMMA config grouped_flat offers the issue-6 suite's 2D grouped layers (two
# buffers), each timed against the shipped kernel with the same config, and each layer's
# fastest mma.sync configs of call 288 as shipped: the best a layer both ways
# (validation/gpu/probe_flat_tma.py --all).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step flat_tma_all 540 python3 validation/gpu/probe_flat_tma.py \
  validation/results/grouped_stages_h200/stage_configs.csv "$RES/flat_tma_all.csv" --all
