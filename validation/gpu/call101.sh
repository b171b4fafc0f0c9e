#!/usr/bin/env bash
# Device call 101 (2026-11-24, nineteenth session): Nsight Compute on ResNet-50
# layer3.1.conv2's weight gradient at batch 32 (fp16): wgrad_staged_tma's chosen config
# (staging copy, GEMM, reduce pass) and cuDNN's, for the next step on the dense 3x3 wgrads
# (0.59-0.70x cuDNN in call 99).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
P=resnet50/layer3.1.conv2/n32/float16
C="wgrad_staged_tma:BLOCK_K=64;BLOCK_M=64;BLOCK_N=128;GROUP_M=4;SPLIT_K=4;num_stages=4;num_warps=4"
for t in staged cudnn; do
  if [ $t = staged ]; then args=("$P" wgrad "$C"); else args=("$P" wgrad); fi
  step "ncu_$t" 150 "$NCU" --profile-from-start off --clock-control none --set full \
    -o "$RES/ncu_$t" python3 validation/gpu/profile_grad.py "${args[@]}"
  "$NCU" --import "$RES/ncu_$t.ncu-rep" --page details > "$RES/ncu_$t.txt" 2>&1
  rm -f "$RES/ncu_$t.ncu-rep"
done
