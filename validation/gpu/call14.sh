#!/usr/bin/env bash
# Device call 14 (2026-11-23, third session): gradient sweeps of random training shapes
# (grouped, depthwise, 3D, odd sizes) so the per-direction models see more than the
# three networks' layers; appended to the gradient CSVs, resumable.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
save_bwd() { mkdir -p "$RES/sweeps"; cp data/sweeps/h100/bwd_* "$RES/sweeps/" 2>/dev/null; pack; }
trap save_bwd EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16"
for spec in random_train:0:40 random_train:3:40; do
  for d in dgrad wgrad; do
    left=$((${DEADLINE:-565} - SECONDS)); [ $left -lt 20 ] && break 2
    step "sweep_${d}_${spec//:/_}" $left convdispatch sweep --direction $d --problems $spec \
      --out data/sweeps/h100/bwd_$d.csv $S
  done
done
