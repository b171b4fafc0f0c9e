#!/usr/bin/env bash
# Device call 166 (2026-11-26, thirtieth session): call 165's GPU tests of the Gluon
# families (rules and launch operands moved to gluon_common; never run), then Nsight
# Compute on wgrad_grouped_flat's shipped choices where it is weakest against cuDNN
# (ResNeXt-50 batch 32: layer2.0 stride 2, layer4.1 7x7) and on layer1.0, and on cuDNN's
# wgrad of layer2.0 and layer4.1: where the flat kernel's time goes before changing it.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_gpu_grad.py tests/test_gpu_families.py -m gpu \
  -k "(halo_wgrad_configs and (cg32_7x7 or cg8_s2_bf16)) or (grouped_flat_configs and cg32_7x7)"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
P=resnext50_32x4d
prof() {  # NAME PROBLEM [CANDIDATE]
  local name=$1; shift
  step "ncu_$name" 90 "$NCU" --profile-from-start off --clock-control none --set full \
    -o "$RES/ncu_$name" python3 validation/gpu/profile_grad.py "$1" wgrad ${2:+"$2"}
  "$NCU" --import "$RES/ncu_$name.ncu-rep" --page details > "$RES/ncu_$name.txt" 2>&1
  rm -f "$RES/ncu_$name.ncu-rep"
}
prof l20_flat $P/layer2.0.conv2/n32/float16 \
  "wgrad_grouped_flat:BLOCK_M=128;BLOCK_N=16;SPLIT_K=8;num_stages=2;num_warps=2"
prof l41_flat $P/layer4.1.conv2/n32/float16 \
  "wgrad_grouped_flat:BLOCK_M=64;BLOCK_N=32;SPLIT_K=4;num_stages=2;num_warps=4"
prof l10_flat $P/layer1.0.conv2/n32/float16 \
  "wgrad_grouped_flat:BLOCK_M=256;BLOCK_N=16;SPLIT_K=32;num_stages=2;num_warps=2"
prof l20_cudnn $P/layer2.0.conv2/n32/float16
prof l41_cudnn $P/layer4.1.conv2/n32/float16
