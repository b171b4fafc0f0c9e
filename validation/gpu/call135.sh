#!/usr/bin/env bash
# Device call 135 (2026-11-25, twenty-fifth session): the Gluon halo-tile grouped wgrad
# kernel (kernels/wgrad_grouped_halo.py) on ResNeXt-50's stride-1 grouped layers, every
# probe config checked and timed against the shipped wgrad model's pick and cuDNN.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step probe_halo 560 python3 validation/gpu/probe_halo_wgrad.py "$RES/probe_halo.csv" \
  resnext50_32x4d/layer3.1.conv2/n32/float16,resnext50_32x4d/layer4.1.conv2/n32/float16,resnext50_32x4d/layer2.1.conv2/n32/float16,resnext50_32x4d/layer1.0.conv2/n32/float16,resnext50_32x4d/layer3.1.conv2/n8/float16,resnext50_32x4d/layer4.1.conv2/n8/float16,resnext50_32x4d/layer2.1.conv2/n8/float16,resnext50_32x4d/layer1.0.conv2/n8/float16
