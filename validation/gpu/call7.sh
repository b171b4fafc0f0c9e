#!/usr/bin/env bash
# Device call 7 (2026-11-23): the issue-6 layer suite (ResNet-50 at batch 1/32/128,
# ResNeXt-50, MobileNetV2, VGG-16, SD-VAE, 3D video) under the shipped model, with the
# measured bf16 matrix peak. Cut at 300 s: the layers measured by then are kept.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step issue6 300 python3 -m convdispatch.validation.bench_layers --suite issue6 --chooser model \
  --rep-ms 5 --out "$RES/issue6_model"
