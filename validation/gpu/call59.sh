#!/usr/bin/env bash
# Device call 59 (2026-11-24, twelfth session): the split wgrad families whose rows were
# timed with an earlier split reduction and whose best configs split most (small filters:
# wgrad_direct, wgrad_depthwise_taps, wgrad_stem; grouped: wgrad_packed) are swept
# again with the current one (their earlier rows dropped; they are in git history).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step sweep_wgrad $((585 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_direct,wgrad_depthwise_taps,wgrad_stem,wgrad_packed \
  --out data/sweeps/h100/bwd_wgrad.csv $S
