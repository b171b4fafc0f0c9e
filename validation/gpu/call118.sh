#!/usr/bin/env bash
# Device call 118 (2026-11-24, twenty-second session): wgrad_implicit_gemm_tma's new
# configs (TILE_W: a step reduces a block of output pixel rows, not one row; grouped
# filters of 16+ channels a group as whole groups a tile) against the shipped wgrad
# model's choice and cuDNN on the stride-1 3x3 layers of the backward suite.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
P=""
for l in layer1.0 layer2.1 layer3.1 layer4.1; do
  for n in 1 32; do P=$P,resnet50/$l.conv2/n$n/float16; done
done
P=${P#,},resnext50_32x4d/layer3.1.conv2/n32/float16,resnext50_32x4d/layer4.1.conv2/n32/float16
step probe_wgrad_blocks 540 python3 validation/gpu/probe_grad_configs.py \
  "$RES/probe_wgrad_blocks.csv" wgrad wgrad_implicit_gemm_tma TILE_W "$P"
