#!/usr/bin/env bash
# Device call 277 (2026-11-28, forty-fourth session): grouped_flat's filter tiles in vector
# loads (filter_vector's W_VEC, 16 bytes a group's run of 8 channels) against two bytes at
# a time: the probe on the issue-6 grouped layers' fastest flat tile, then the family's
# rows retired here and measured again on both plans (resumable: call 278 finishes).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step vectors_fp16 150 python3 validation/gpu/probe_filter_vectors.py "$RES/vectors_fp16.csv" float16 1
step retire 30 convdispatch retire --families grouped_flat data/sweeps/h100/train.csv \
  data/sweeps/h100/holdout.csv
sweep holdout 110 grouped_flat
sweep train $((590 - SECONDS)) grouped_flat
