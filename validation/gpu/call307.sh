#!/usr/bin/env bash
# Device call 307 (two H200s): the issue-6 suite's grouped layers under the shipped (H100)
# model after the input-buffer change (float16 on GPU 0, bfloat16 on GPU 1: its choices
# take two buffers, as before), then Nsight Compute (full set, clocks as found, no L2
# flush) on the fastest flat configs of ResNeXt-50 layer1.0 and layer2.0 and on cuDNN's.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
(export CUDA_VISIBLE_DEVICES=1
 suite suite_grouped_bf16 200 bfloat16 '*resnext*.conv2/*'
 ncu_probe grp2_flat_tma 100
 ncu_probe grp2_cudnn 100) &
export CUDA_VISIBLE_DEVICES=0
suite suite_grouped_fp16 200 float16 '*resnext*.conv2/*'
ncu_probe grp_flat_tma 100
ncu_probe grp_cudnn 100
wait
