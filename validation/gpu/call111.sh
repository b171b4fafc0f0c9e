#!/usr/bin/env bash
# Device call 111 (2026-11-24, twenty-first session): dgrad_depthwise_span at a stride is
# one launch of its own kernel (kernels/dgrad_depthwise_span.py) instead of one
# depthwise_span launch a stride phase. GPU tests of the depthwise families; the family's
# strided rows (set aside in validation/results/strided_dgrad_h100/old_rows/) swept again;
# then rows left unswept by earlier calls: 209 wgrad_gemm configs on 38 wgrad problems
# and 4 forward depthwise_span rows that ran out of memory beside 14 workers.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "depthwise"
S="--rep-ms 5 --warmup-ms 2 --quiet"
PLAN=resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40
step sweep_dgrad 200 convdispatch sweep --direction dgrad --families dgrad_depthwise_span \
  --problems $PLAN --dtype float16 --out data/sweeps/h100/bwd_dgrad.csv --jobs 8 $S
step sweep_wgrad 150 convdispatch sweep --direction wgrad --families wgrad_gemm \
  --problems $PLAN --dtype float16 --out data/sweeps/h100/bwd_wgrad.csv --jobs 8 $S
step sweep_fwd_train $((585 - SECONDS)) convdispatch sweep --direction forward \
  --families depthwise_span --problems train --out data/sweeps/h100/train.csv --jobs 4 $S
