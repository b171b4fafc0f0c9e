#!/usr/bin/env bash
# Device call 189 (as call 188, with the const_idx variant) (2026-11-27, thirty-second session): the floor of a split wgrad's
# reduction pass (probe_reduce_floor.py): the pass as it is, a lean sum in workspace order,
# a dependent kernel that only waits, and none, on call 183's wgrad choices (call 187's
# timelines: the pass ends 3.3-5.0 us after its main kernel).
# (The probe's const_idx variant became the shipped pass after this call; the probe with it
# is at commit e241e2f.)
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
P=resnext50_32x4d
M=mobilenet_v2
R=resnet50
step floor 400 python3 validation/gpu/probe_reduce_floor.py \
  validation/results/split_reduction_h100/call183/bwd_full/bench.csv "$RES/floor.csv" \
  $P/layer4.1.conv2/n32/float16 $P/layer4.0.conv2/n32/float16 \
  $P/layer3.1.conv2/n32/float16 $P/layer2.1.conv2/n32/float16 \
  $P/layer1.0.conv2/n32/float16 $M/features.15.conv.1.0/n32/float16 \
  $M/features.5.conv.1.0/n32/float16 $M/features.1.conv.0.0/n32/float16 \
  $M/features.12.conv.1.0/n32/float16 $R/layer3.1.conv2/n32/float16 \
  $R/layer3.1.conv1/n32/float16 $R/layer1.0.conv1/n1/float16
