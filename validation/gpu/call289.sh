#!/usr/bin/env bash
# Device call 289 (2026-11-28, forty-sixth session, an H200 again): where grouped_flat's
# time goes on the issue-6 suite's grouped layers (validation/gpu/probe_flat_stages.py:
# each layer's fastest configs of call 288 timed whole, without the copies, without the
# mmas, without both), then the issue-6 suite in float16 under the shipped (H100) model:
# how it stands on the GPU lent now.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step stages 330 python3 validation/gpu/probe_flat_stages.py \
  validation/results/grouped_stages_h200/stage_configs.csv "$RES/stages.csv" float16
suite issue6_fp16 $((585 - SECONDS))
