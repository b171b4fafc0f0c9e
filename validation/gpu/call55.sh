#!/usr/bin/env bash
# Device call 55 (2026-11-24, twelfth session): wgrad_depthwise_rows' 8-row tiles (a
# probe in call 54 ran the best swept tiles made 8 rows high 1.06-1.15x faster on 7 of
# 10 of MobileNetV2's layers): the sweep resumes, so only the new configs are measured.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step sweep_wgrad $((585 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_depthwise_rows --out data/sweeps/h100/bwd_wgrad.csv $S
