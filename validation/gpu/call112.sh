#!/usr/bin/env bash
# Device call 112 (2026-11-24, twenty-first session): the dgrad of strided grouped convs
# regroups the filter once for all stride phases (kernels/dgrad_forward.py); its
# dgrad_grouped_packed / dgrad_grouped_rows strided rows (set aside in
# validation/results/strided_dgrad_h100/old_rows/) are swept again, after the GPU tests
# of the grouped and depthwise gradient cases. Then the backward suite's wgrad half with
# the wgrad model retrained on call 111's rows (bef033ddfb80).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "grouped and dgrad"
S="--rep-ms 5 --warmup-ms 2 --quiet"
PLAN=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step sweep_dgrad 200 convdispatch sweep --direction dgrad \
  --families dgrad_grouped_packed,dgrad_grouped_rows \
  --problems $PLAN --dtype float16 --out data/sweeps/h100/bwd_dgrad.csv --jobs 8 $S
step bwd_wgrad $((585 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions wgrad --out "$RES/bwd_wgrad"
