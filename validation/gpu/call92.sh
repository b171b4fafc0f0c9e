#!/usr/bin/env bash
# Device call 92 (2026-11-24, eighteenth session): profiles for the next kernel work, no
# shipped change. The issue-6 suite's slowest memory-bound dense layers (MobileNetV2's
# 1x1s of 24 and 144 channels at batch 32, 0.72-0.74x cuDNN) and the stride-2 grouped
# layer (ResNeXt-50 layer2.0.conv2, 0.89x; its call-30 profile predates the tap-loop
# change): the probes' times (sweep timer), then Nsight Compute on ours and cuDNN's.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step probe_times 90 python3 validation/gpu/probe.py time
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for t in pw24_ours pw24_cudnn pw144_ours pw144_cudnn grp2_packed grp2_cudnn; do
  step "ncu_$t" 75 "$NCU" --profile-from-start off --clock-control none --set full \
    -o "$RES/ncu_$t" python3 validation/gpu/probe.py profile "$t"
  "$NCU" --import "$RES/ncu_$t.ncu-rep" --page details > "$RES/ncu_$t.txt" 2>&1
  rm -f "$RES/ncu_$t.ncu-rep"
done
