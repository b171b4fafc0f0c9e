#!/usr/bin/env bash
# Device call 291 (2026-11-28, forty-sixth session, an H200): call 290's copy-only kernel
# with rows of 64 channels (128 bytes a pixel, two packs of the 32-wide tiles) beside 32,
# items of 64 and 128 positions (validation/gpu/probe_tma_phases.py).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step tma_phases 400 python3 validation/gpu/probe_tma_phases.py "$RES/tma_phases.csv" \
  32x128 64x128 64x64 32x256
