#!/usr/bin/env bash
# Device call 282 (2026-11-28, forty-fifth session): does wgmma read a row-shifted view of
# a swizzled shared buffer (the flat grid's tap views) correctly?
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step wgmma_shift 120 python3 validation/gpu/probe_wgmma_shift.py
