#!/usr/bin/env bash
# Device call 42 (2026-11-24, ninth session): the rest of call 41's dgrad sweep of the
# dgrad_<forward family> twins (resumes where call 41 stopped).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
FAM=dgrad_implicit_gemm,dgrad_splitk,dgrad_pointwise,dgrad_pointwise_tma,dgrad_grouped_packed,dgrad_grouped_rows,dgrad_depthwise_span
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --direction dgrad --dtype float16 --families $FAM --quiet"
step sweep_nets $((420 - SECONDS)) convdispatch sweep --problems mobilenet_v2,resnext50_32x4d,resnet50 \
  --out data/sweeps/h100/bwd_dgrad.csv $S
step sweep_random $((585 - SECONDS)) convdispatch sweep --problems random_train:0:40,random_train:3:40 \
  --out data/sweeps/h100/bwd_dgrad.csv $S
