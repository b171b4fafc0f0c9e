#!/usr/bin/env bash
# Device call 178 (2026-11-27, thirty-first session): grouped_flat and its dgrad twin with
# 16-channel phase rows in planes and/or the filter tiles held in registers
# (validation/gpu/probe_flat_variants.py at commit a926e72, removed with the variants after
# this call; call 177 found the forward kernel waiting on
# ldmatrix-fed mmas with half its shared-load wavefronts bank conflicts). ResNeXt-50,
# batch 32: the stride-1 layers with 4-16-channel groups, layer2.0 (stride 2) and layer4.1
# (32-channel groups: only the registers apply).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
P=resnext50_32x4d
step probe 560 python3 validation/gpu/probe_flat_variants.py "$RES/variants.csv" \
  $P/layer1.0.conv2/n32/float16,$P/layer2.1.conv2/n32/float16,$P/layer3.1.conv2/n32/float16,$P/layer2.0.conv2/n32/float16,$P/layer4.1.conv2/n32/float16
