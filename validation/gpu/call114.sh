#!/usr/bin/env bash
# Device call 114 (2026-11-24, twenty-second session): grouped_tma (TMA boxes at a group's
# channel offset, one group a tile) against the shipped model's choice and cuDNN on the
# grouped layers of 16+ channels a group, every config of its first space.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step probe_grouped_tma 540 python3 validation/gpu/probe_grouped_tma.py "$RES/probe_grouped_tma.csv"
