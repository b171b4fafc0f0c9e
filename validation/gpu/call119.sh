#!/usr/bin/env bash
# Device call 119 (2026-11-24, twenty-second session): strided dgrad with its stride phases
# in order against the phases on side streams (launcher.branches), in CUDA graphs, on the
# strided layers of the backward suite; the GPU dgrad tests with branches on.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "dgrad or autograd or training"
P=resnext50_32x4d/layer2.0.conv2/n32/float16,resnext50_32x4d/layer3.0.conv2/n32/float16
P=$P,resnext50_32x4d/layer4.0.conv2/n32/float16
for l in layer2.0.conv2 layer3.0.conv2 layer4.0.conv2 layer3.0.downsample.0; do
  P=$P,resnet50/$l/n32/float16
done
P=$P,resnet50/layer3.0.conv2/n1/float16,resnet50/layer4.0.conv2/n1/float16
step probe_branches $((570 - SECONDS)) python3 validation/gpu/probe_branches.py \
  "$RES/probe_branches.csv" "$P" 2
