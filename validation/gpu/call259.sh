#!/usr/bin/env bash
# Device call 259 (2026-11-27, fortieth session): profiles for the next grouped work, no
# shipped change: the issue-6 grouped layers furthest from 2x cuDNN under model
# 1399ea6eb29c's choices (ResNeXt-50 layer3.0 at batch 32, 0.95x; layer1.0, 1.21-1.29x;
# ResNeXt3D-50 layer2.0 at batch 8, 1.18x). (probe.py's grp3_cudnn and v3d2_taps targets:
# call 261.)
# (It ran as the same command lines written out; env.sh's ncu_probe came after.)
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
for t in grp3_packed grp_flat v3d2_packed; do
  ncu_probe "$t" 80
done
