#!/usr/bin/env bash
# Device call 265 (2026-11-27, forty-first session): Nsight Compute on grouped_flat's
# ResNeXt-50 layer1.0 config of call 259 (validation/gpu/probe.py's grp_flat), now with
# 16-byte stores, for the profile before and after.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
ncu_probe grp_flat 120
