#!/usr/bin/env bash
# Device call 228 (2026-11-27, thirty-seventh session): the issue-6 grouped layers as
# block-diagonal super-groups of P groups (P times the multiply-adds, fewer and wider
# groups): cuDNN and the dispatcher on the super-group conv, and the dispatcher's dense
# kernels on each super-group's channels, against the layer as it is.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step probe $((400 - SECONDS)) python3 validation/gpu/probe_supergroups.py "$RES/supergroups.csv"
