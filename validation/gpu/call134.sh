#!/usr/bin/env bash
# Device call 134 (2026-11-25, twenty-fifth session): wgrad_grouped_taps with PREFETCH
# (plain, L1-cached loads issued an item ahead in registers, one stage) against its
# shipped space (cp.async pipelines, which bypass L1), same run, same timer: the sweep of
# the family alone on ResNeXt-50's grouped layers at batch 32 and 8 into a fresh CSV.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "wgrad and grouped"
P=resnext50_32x4d/layer1.0.conv2/n32/float16,resnext50_32x4d/layer1.0.conv2/n8/float16,resnext50_32x4d/layer2.0.conv2/n32/float16,resnext50_32x4d/layer2.0.conv2/n8/float16,resnext50_32x4d/layer2.1.conv2/n32/float16,resnext50_32x4d/layer2.1.conv2/n8/float16,resnext50_32x4d/layer3.0.conv2/n32/float16,resnext50_32x4d/layer3.0.conv2/n8/float16,resnext50_32x4d/layer3.1.conv2/n32/float16,resnext50_32x4d/layer3.1.conv2/n8/float16,resnext50_32x4d/layer4.0.conv2/n32/float16,resnext50_32x4d/layer4.0.conv2/n8/float16,resnext50_32x4d/layer4.1.conv2/n32/float16,resnext50_32x4d/layer4.1.conv2/n8/float16
step sweep_taps $((570 - SECONDS)) convdispatch sweep --direction wgrad --problems $P \
  --families wgrad_grouped_taps --out "$RES/taps_prefetch.csv" --rep-ms 5 --warmup-ms 2 \
  --jobs 14 --quiet
