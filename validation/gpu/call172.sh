#!/usr/bin/env bash
# Device call 172 (2026-11-27, thirtieth session): are 32-channel tiles (planes, 4 warps)
# worth offering to wgrad_grouped_flat for ResNeXt-50's 4-16-channel groups? A probe of
# the five layers at batch 32 (validation/gpu/probe_flat_wide.py), no shipped change.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
P=resnext50_32x4d
step probe_wide 300 python3 validation/gpu/probe_flat_wide.py "$RES/probe_wide.csv" \
  $P/layer1.0.conv2/n32/float16,$P/layer2.0.conv2/n32/float16,$P/layer2.1.conv2/n32/float16,$P/layer3.0.conv2/n32/float16,$P/layer3.1.conv2/n32/float16
