#!/usr/bin/env bash
# Device call 120 (2026-11-24, twenty-second session): strided dgrad's stride phases on
# side streams (launcher.branches, also on Plan replay): the GPU tests of it and of the
# strided gradient cases, then the re-sweep of the 4654 strided rows of the families that
# launch a phase at a time (set aside by `convdispatch retire --strided-only`; a sweep
# skips rows it has, so a second call finishes it).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "side_streams or (dgrad and (s2 or stem))"
S="--rep-ms 5 --warmup-ms 2 --quiet"
PLAN=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step sweep_dgrad $((575 - SECONDS)) convdispatch sweep --direction dgrad \
  --families dgrad_implicit_gemm,dgrad_splitk,dgrad_pointwise,dgrad_grouped_packed,dgrad_grouped_rows,dgrad_depthwise,dgrad_depthwise_span \
  --problems $PLAN --dtype float16 --out data/sweeps/h100/bwd_dgrad.csv --jobs 8 $S
