#!/usr/bin/env bash
# Device call 174 (2026-11-27, thirtieth session): why 16-channel flat-grid rows were 7%
# slower in planes of 8 (call 168) with the same SASS but for address offsets: Nsight
# Compute on ResNeXt-50 layer1.0 (batch 32, the wgrad model's config) with the rows whole
# (shipped) and in planes (validation/gpu/profile_flat_planes.py). No shipped change.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
C="wgrad_grouped_flat:BLOCK_M=256;BLOCK_N=16;SPLIT_K=32;num_stages=2;num_warps=2"
for v in rows planes; do
  step "ncu_l10_$v" 100 env TRITON_CACHE_DIR=/tmp/tc_$v "$NCU" --profile-from-start off \
    --clock-control none --set full -k regex:wgrad_grouped_flat -o "$RES/ncu_l10_$v" \
    python3 validation/gpu/profile_flat_planes.py $v resnext50_32x4d/layer1.0.conv2/n32/float16 "$C"
  "$NCU" --import "$RES/ncu_l10_$v.ncu-rep" --page details > "$RES/ncu_l10_$v.txt" 2>&1
  rm -f "$RES/ncu_l10_$v.ncu-rep"
done
