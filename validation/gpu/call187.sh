#!/usr/bin/env bash
# Device call 187 (2026-11-27, thirty-second session): kernel timelines of one backward
# pass in a CUDA graph, cuDNN's against ours in order (probe_trace.py, torch.profiler):
# whether cuDNN's dgrad and wgrad kernels overlap or leave gaps, where its one pass is
# 7 us shorter than its two gradients timed apart on ResNeXt-50 layer4.1 (call 181).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
P=resnext50_32x4d
M=mobilenet_v2
step trace 300 python3 validation/gpu/probe_trace.py "$RES/trace.csv" \
  $P/layer4.1.conv2/n32/float16 $P/layer2.1.conv2/n32/float16 \
  $P/layer1.0.conv2/n32/float16 $M/features.15.conv.1.0/n32/float16 \
  $M/features.5.conv.1.0/n32/float16 resnet50/layer3.1.conv2/n32/float16
