#!/usr/bin/env bash
# Device call 48 (2026-11-24, eleventh session): the wgrad sweeps of wgrad_stem and
# wgrad_depthwise_taps again after their loads changed (unsigned bounds tests; depthwise
# channel offsets provably contiguous: call 47's rows of both were dropped), and the
# rest of dgrad_stem's sweep (resumable).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step sweep_wgrad 420 convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_depthwise_taps,wgrad_stem --out data/sweeps/h100/bwd_wgrad.csv $S
step sweep_dgrad $((585 - SECONDS)) convdispatch sweep --direction dgrad --problems $P \
  --families dgrad_stem --out data/sweeps/h100/bwd_dgrad.csv $S
