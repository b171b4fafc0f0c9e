#!/usr/bin/env bash
# Device call 290 (2026-11-28, forty-sixth session, an H200): grouped_flat's input copies
# through the tensor memory accelerator against cp.async, in a copy-only kernel of the
# family's loop on the issue-6 suite's 2D grouped layers
# (validation/gpu/probe_tma_phases.py).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step tma_phases 400 python3 validation/gpu/probe_tma_phases.py "$RES/tma_phases.csv"
