#!/usr/bin/env bash
# Device call 304 (two H200s): probe_flat_buffers.py on the issue-6 suite's 21 grouped
# layers in float16, half the layers a GPU (deeper input pipelines: 3 and 4 buffers, and
# the phase images at their copied length), then grouped_flat's GPU tests on GPU 1 and the
# probe's bfloat16 run of the first half on GPU 0.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(CUDA_VISIBLE_DEVICES=1 step buffers_fp16_1 300 python3 validation/gpu/probe_flat_buffers.py \
   "$RES/buffers_fp16_1.csv" float16 7 1/2
 CUDA_VISIBLE_DEVICES=1 step gpu_tests 240 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest \
   -q -p no:cacheprovider tests/test_gpu_families.py -m gpu -k grouped_flat) &
CUDA_VISIBLE_DEVICES=0 step buffers_fp16_0 300 python3 validation/gpu/probe_flat_buffers.py \
  "$RES/buffers_fp16_0.csv" float16 7 0/2
CUDA_VISIBLE_DEVICES=0 step buffers_bf16_0 200 python3 validation/gpu/probe_flat_buffers.py \
  "$RES/buffers_bf16_0.csv" bfloat16 7 0/2
wait
