#!/usr/bin/env bash
# Device call 73 (2026-11-24, fourteenth session): dgrad by stride phases (the
# dgrad_<forward family> twins on strided layers: one stride-1 forward conv of dY a phase
# of dX, kernels/dgrad_forward.py phase_problems). GPU tests of every dgrad family on the
# strided real-size shapes, then the dgrad sweep of the twins that now take strided
# layers over the gradient sweep's problems (resumable: stride-1 rows are kept).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --dtype float16 --quiet"
P=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
F=dgrad_implicit_gemm,dgrad_splitk,dgrad_grouped_packed,dgrad_grouped_rows,dgrad_depthwise,dgrad_depthwise_span
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -k "dgrad and s2"
step sweep_dgrad $((585 - SECONDS)) convdispatch sweep --direction dgrad --problems $P \
  --families $F --out data/sweeps/h100/bwd_dgrad.csv $S
