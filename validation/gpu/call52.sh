#!/usr/bin/env bash
# Device call 52 (2026-11-24, twelfth session): wgrad_depthwise_rows on MobileNetV2's
# depthwise layers at batch 32: its best swept configs with and without the next item's
# loads issued ahead (num_stages=2), against cuDNN; then Nsight Compute on
# features.1 (ours, prefetched, cuDNN) and features.3 (ours, cuDNN).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step probe 150 python3 validation/gpu/probe_dw_wgrad.py bench "$RES/probe_dw_wgrad.csv"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
SECTIONS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
  --section WarpStateStats --section SchedulerStats --section LaunchStats"
for t in "features.1.conv.0.0 ours" "features.1.conv.0.0 ours_pf" "features.1.conv.0.0 cudnn" \
         "features.3.conv.1.0 ours" "features.3.conv.1.0 cudnn"; do
  set -- $t; name="ncu_${1%%.conv*}_$2"
  step "$name" 60 "$NCU" --profile-from-start off --clock-control none $SECTIONS \
    python3 validation/gpu/probe_dw_wgrad.py profile "$1" "$2"
done
