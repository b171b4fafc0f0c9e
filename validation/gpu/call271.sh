#!/usr/bin/env bash
# Device call 271 (2026-11-28, forty-second session): Nsight Compute on grouped_flat's
# row-reuse schedule, the model's choices for ResNeXt-50 layer1.0 at batch 32 and
# ResNeXt3D-50 layer1.0 at batch 8 (call 265 profiled layer1.0's choice before it).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
ncu_probe grp_flat_reuse 150
ncu_probe v3d1_flat_reuse 150
