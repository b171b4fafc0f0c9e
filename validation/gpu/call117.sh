#!/usr/bin/env bash
# Device call 117 (2026-11-24, twenty-second session): kernel by kernel, where the time of
# the grouped and depthwise wgrad candidates goes (staging copy, main kernel, split
# reduction) next to cuDNN's kernels, on ResNeXt-50's and MobileNetV2's layers at batch 32.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
P=resnext50_32x4d/layer2.1.conv2/n32/float16,resnext50_32x4d/layer3.1.conv2/n32/float16
P=$P,resnext50_32x4d/layer4.1.conv2/n32/float16,resnext50_32x4d/layer3.0.conv2/n32/float16
P=$P,mobilenet_v2/features.3.conv.1.0/n32/float16,mobilenet_v2/features.15.conv.1.0/n32/float16
step split_wgrad 400 python3 validation/gpu/probe_kernel_split.py "$RES/split_wgrad.csv" wgrad "$P" 2
