#!/usr/bin/env bash
# Device call 309 (two H200s): the issue-6 suite's grouped layers under the shipped model
# with half_blocks' copy guard (HALVES_MAX_COPIES), float16 on GPU 0, bfloat16 on GPU 1.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(CUDA_VISIBLE_DEVICES=1 suite suite_grouped_bf16 200 bfloat16 '*resnext*.conv2/*') &
CUDA_VISIBLE_DEVICES=0 suite suite_grouped_fp16 200 float16 '*resnext*.conv2/*'
wait
