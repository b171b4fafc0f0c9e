#!/usr/bin/env bash
# Device call 261 (2026-11-27, fortieth session): the two profiles call 259 left out:
# cuDNN's kernel on ResNeXt-50 layer3.0 at batch 32 and a tap-step config on ResNeXt3D-50
# layer2.0 at batch 8 (validation/gpu/probe.py's grp3_cudnn and v3d2_taps). No shipped
# change.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
for t in grp3_cudnn v3d2_taps; do
  ncu_probe "$t" 80
done
