#!/usr/bin/env bash
# Device call 177 (2026-11-27, thirty-first session): where the flat-grid kernels' time
# goes now that more warps (call 175) and fewer copies (call 176) did not move it. Nsight
# Compute (details and per-instruction SASS samples) on ResNeXt-50 batch 32: the dgrad twin
# (the forward kernel) on layer1.0, wgrad on layer2.0 and layer4.1, the model's configs;
# cuDNN's dgrad on layer1.0 beside them.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
P=resnext50_32x4d
prof() {  # NAME DIRECTION PROBLEM [CANDIDATE]
  local name=$1 dir=$2; shift 2
  step "ncu_$name" 90 "$NCU" --profile-from-start off --clock-control none --set full \
    --import-source yes -o "$RES/ncu_$name" python3 validation/gpu/profile_grad.py "$1" "$dir" \
    ${2:+"$2"}
  "$NCU" --import "$RES/ncu_$name.ncu-rep" --page details > "$RES/ncu_$name.txt" 2>&1
  "$NCU" --import "$RES/ncu_$name.ncu-rep" --page source --csv --print-source sass \
    > "$RES/ncu_${name}_sass.csv" 2>&1
  gzip -f "$RES/ncu_${name}_sass.csv" "$RES/ncu_$name.txt"
  rm -f "$RES/ncu_$name.ncu-rep"
}
prof l10_dgrad_flat dgrad $P/layer1.0.conv2/n32/float16 \
  "dgrad_grouped_flat:BLOCK_M=128;BLOCK_N=16;ITEMS=8;num_stages=1;num_warps=2"
prof l10_dgrad_cudnn dgrad $P/layer1.0.conv2/n32/float16
prof l20_wgrad_flat wgrad $P/layer2.0.conv2/n32/float16 \
  "wgrad_grouped_flat:BLOCK_M=128;BLOCK_N=16;SPLIT_K=8;num_stages=2;num_warps=2"
prof l41_wgrad_flat wgrad $P/layer4.1.conv2/n32/float16 \
  "wgrad_grouped_flat:BLOCK_M=64;BLOCK_N=32;SPLIT_K=4;num_stages=2;num_warps=4"
