#!/usr/bin/env bash
# Device call 210 (2026-11-27, thirty-fourth session): calls 206-207 measured ResNeXt3D-50's
# layer3.x at batch 8 slower overlapped than in order (31.4 against 18.9 us). One backward
# pass of the issue-6 suite's grouped layers under each launch switch
# (validation/gpu/probe_overlap.py).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step probe_overlap 560 python3 validation/gpu/probe_overlap.py "$RES/overlap.csv" issue6
