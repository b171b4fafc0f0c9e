#!/usr/bin/env bash
# Device call 140 (2026-11-25, twenty-fifth session): the forward grouped conv from
# shared-memory input rows (kernels/grouped_halo.py, Gluon, not registered) against the
# forward model's pick and cuDNN on ResNeXt-50's grouped layers.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step probe_fwd 560 python3 validation/gpu/probe_halo_forward.py "$RES/probe_halo_forward.csv" \
  resnext50_32x4d/layer3.1.conv2/n32/float16,resnext50_32x4d/layer2.1.conv2/n32/float16,resnext50_32x4d/layer1.0.conv2/n32/float16,resnext50_32x4d/layer4.1.conv2/n32/float16,resnext50_32x4d/layer3.0.conv2/n32/float16,resnext50_32x4d/layer2.0.conv2/n32/float16,resnext50_32x4d/layer3.1.conv2/n8/float16,resnext50_32x4d/layer1.0.conv2/n8/float16
