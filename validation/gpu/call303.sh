#!/usr/bin/env bash
# Device call 303 (2026-11-28, forty-seventh session, two H200s): the whole issue-6 suite
# under the shipped (H100) model with this session's grouped_flat (W_ASYNC; TMA and
# ITEMS=1 offered but unseen by the model): float16 on GPU 0, bfloat16 on GPU 1, at once.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(CUDA_VISIBLE_DEVICES=1 suite issue6_bf16 205 bfloat16) &
CUDA_VISIBLE_DEVICES=0 suite issue6_fp16 205
wait
