#!/usr/bin/env bash
# Device call 273 (2026-11-28, forty-third session): grouped_flat with four input buffers
# (three steps' copies in flight) against two, on the issue-6 grouped layers' two fastest
# flat tiles (probe_flat_buffers.py), and Nsight Compute on the two-buffer kernel at
# stride 2 (ResNeXt-50 layer2.0, batch 32) and on ResNeXt3D-50 layer2.1 at batch 8.
# (The probe, which needs four_buffers.patch, now lives in
# validation/results/filter_burst_h100/, as run.)
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step probe_fp16 420 python3 validation/gpu/probe_flat_buffers.py "$RES/buffers_fp16.csv" float16 2
ncu_probe grp2_flat 60
ncu_probe v3d21_flat 60
