#!/usr/bin/env bash
# Device call 123 (2026-11-24, twenty-third session): where an eager training step of
# train_check's network spends its time (wall, kernels, host functions).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step step_host 240 python3 validation/gpu/probe_step_host.py "$RES/step_host" 20
