#!/usr/bin/env bash
# Device call 299 (2026-11-28, forty-seventh session, two H200s): the issue-6 suite's 21
# grouped layers under the shipped (H100) model, with grouped_flat's filter tiles as
# cp.async copies (W_ASYNC, calls 297-298): float16 on GPU 0, bfloat16 on GPU 1, at once.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(CUDA_VISIBLE_DEVICES=1 suite grouped_bf16 420 bfloat16 '*resnext*.conv2/*') &
CUDA_VISIBLE_DEVICES=0 suite grouped_fp16 420 '' '*resnext*.conv2/*'
wait
