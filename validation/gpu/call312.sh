#!/usr/bin/env bash
# Device call 312 (two H200s): the whole issue-6 suite (dense, grouped, depthwise) under the
# shipped H100 model with this session's grouped_flat (diag_blocks), float16 on GPU 0 and
# bfloat16 on GPU 1: the H200's picture of every issue-6 target (call 289 was the last).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(CUDA_VISIBLE_DEVICES=1 suite issue6_bf16 420 bfloat16) &
CUDA_VISIBLE_DEVICES=0 suite issue6_fp16 420
wait
