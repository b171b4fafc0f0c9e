#!/usr/bin/env bash
# Device call 104 (2026-11-24, twentieth session): where MobileNetV2's depthwise gradients
# stand against memory. The copy rate at each layer's size and cuDNN's three directions
# (probe_roofline.py), then Nsight Compute on features.3.conv.1.0 (batch 32, fp16) for the
# chosen dgrad and wgrad configs and cuDNN's (issue 7: depthwise backward at 1.13x / 1.06x
# cuDNN, the target is 1.5x).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step roofline 120 python3 validation/gpu/probe_roofline.py
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
P=mobilenet_v2/features.3.conv.1.0/n32/float16
DG="dgrad_depthwise_span:BLOCK_M=4;BLOCK_N=128;num_stages=1;num_warps=1"
WG="wgrad_depthwise_rows:BLOCK_M=64;BLOCK_N=32;SPLIT_K=128;TILE_W=16;num_stages=1;num_warps=4"
for t in dgrad_ours dgrad_cudnn wgrad_ours wgrad_cudnn; do
  dir=${t%_*}
  case $t in dgrad_ours) args=("$P" dgrad "$DG");; wgrad_ours) args=("$P" wgrad "$WG");;
    *) args=("$P" "$dir");; esac
  step "ncu_$t" 120 "$NCU" --profile-from-start off --clock-control none --set full \
    -o "$RES/ncu_$t" python3 validation/gpu/profile_grad.py "${args[@]}"
  "$NCU" --import "$RES/ncu_$t.ncu-rep" --page details > "$RES/ncu_$t.txt" 2>&1
  rm -f "$RES/ncu_$t.ncu-rep"
done
