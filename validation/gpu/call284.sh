#!/usr/bin/env bash
# Device call 284 (2026-11-28, forty-fifth session): grouped_flat's WGMMA tiles also 32
# wide for groups of 16 channels or fewer (64 bytes a pixel a copy), and with four buffers
# (three steps' copies in flight): their rows on both plans (the rows already there are
# kept), then the family's GPU tests (every config it offers, WGMMA ones included).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
sweep holdout 100 grouped_flat
sweep train $((400 - SECONDS)) grouped_flat
step gpu_tests $((585 - SECONDS)) python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py -k grouped_flat
