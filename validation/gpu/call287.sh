#!/usr/bin/env bash
# Device call 287 (2026-11-28, forty-fifth session): Nsight Compute on the WGMMA flat tiles
# the model takes on ResNeXt-50's strided layer2.0 and layer3.0 at batch 32 (call 273
# profiled the 16-wide mma.sync tile on layer2.0).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
ncu_probe grp2_flat_wgmma 90
ncu_probe grp3_flat_wgmma 90
