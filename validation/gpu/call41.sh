#!/usr/bin/env bash
# Device call 41 (2026-11-24, ninth session): dgrad through the forward kernels (the
# dgrad_<forward family> twins, kernels/dgrad_forward.py) and wgrad_pointwise_tma. GPU
# tests of every dgrad family and of the 1x1 wgrad on real shapes, the backward benchmark
# with the rule chooser (dgrad: the forward rule on dY's forward conv, forward config
# order), then the sweeps of the new families, resumable.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_dgrad_tests 170 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -k "dgrad or pointwise"
step bwd_rule 200 python3 -m convdispatch.validation.bench_backward --suite issue2 \
  --chooser rule --rep-ms 5 --out "$RES/bwd_issue2_rule"
FAM=dgrad_implicit_gemm,dgrad_splitk,dgrad_pointwise,dgrad_pointwise_tma,dgrad_grouped_packed,dgrad_grouped_rows,dgrad_depthwise_span
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --direction dgrad --dtype float16 --families $FAM --quiet"
step sweep_random $((400 - SECONDS)) convdispatch sweep --problems random_train:0:40,random_train:3:40 \
  --out data/sweeps/h100/bwd_dgrad.csv $S
step sweep_wgrad_tma $((470 - SECONDS)) convdispatch sweep --problems resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40 \
  --out data/sweeps/h100/bwd_wgrad.csv --rep-ms 5 --warmup-ms 2 --jobs 15 --direction wgrad \
  --dtype float16 --families wgrad_pointwise_tma --quiet
step sweep_nets $((585 - SECONDS)) convdispatch sweep --problems mobilenet_v2,resnext50_32x4d,resnet50 \
  --out data/sweeps/h100/bwd_dgrad.csv $S
