#!/usr/bin/env bash
# Device call 195 (2026-11-27, thirty-second session): overlapped gradients with dW's
# kernels launched before dX's (autograd.WGRAD_FIRST; call 194: ResNeXt-50 layer4.0's
# one-wave wgrad only started once the strided dgrad's four phase kernels had the SMs),
# on the issue-2 layers that overlap (probe_overlap_order.py).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
P=resnext50_32x4d
M=mobilenet_v2
R=resnet50
step order 280 python3 validation/gpu/probe_overlap_order.py "$RES/order.csv" \
  $P/layer4.0.conv2/n32/float16 $P/layer3.0.conv2/n32/float16 \
  $P/layer2.0.conv2/n32/float16 $P/layer4.1.conv2/n32/float16 \
  $M/features.1.conv.0.0/n32/float16 $M/features.2.conv.1.0/n32/float16 \
  $M/features.3.conv.1.0/n32/float16 $M/features.4.conv.1.0/n32/float16 \
  $M/features.5.conv.1.0/n32/float16 $M/features.7.conv.1.0/n32/float16 \
  $M/features.8.conv.1.0/n32/float16 $M/features.12.conv.1.0/n32/float16 \
  $M/features.14.conv.1.0/n32/float16 $M/features.15.conv.1.0/n32/float16 \
  $R/layer1.0.conv2/n32/float16 $R/layer2.0.conv2/n32/float16 \
  $R/layer3.0.conv2/n32/float16 $R/layer3.1.conv2/n32/float16 \
  $R/layer4.0.conv2/n32/float16 $R/layer4.1.conv2/n32/float16
