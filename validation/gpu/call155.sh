#!/usr/bin/env bash
# Device call 155 (2026-11-26, twenty-eighth session): the gradient sweeps had no 3D grouped
# problem, and call 154 found the models' picks on ResNeXt3D-50's grouped layers at
# 0.20-0.64x cuDNN on some (wgrad_packed at SPLIT_K=1 on batch 1, say). Every dgrad and
# wgrad candidate of the 14 grouped video3d problems (resumable; appended to the CSVs).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
P=video3d/resnext3d_50.layer1.0.conv2/n1/float16,video3d/resnext3d_50.layer2.0.conv2/n1/float16
P=$P,video3d/resnext3d_50.layer2.1.conv2/n1/float16,video3d/resnext3d_50.layer3.0.conv2/n1/float16
P=$P,video3d/resnext3d_50.layer3.1.conv2/n1/float16,video3d/resnext3d_50.layer4.0.conv2/n1/float16
P=$P,video3d/resnext3d_50.layer4.1.conv2/n1/float16,video3d/resnext3d_50.layer1.0.conv2/n8/float16
P=$P,video3d/resnext3d_50.layer2.0.conv2/n8/float16,video3d/resnext3d_50.layer2.1.conv2/n8/float16
P=$P,video3d/resnext3d_50.layer3.0.conv2/n8/float16,video3d/resnext3d_50.layer3.1.conv2/n8/float16
P=$P,video3d/resnext3d_50.layer4.0.conv2/n8/float16,video3d/resnext3d_50.layer4.1.conv2/n8/float16
for dir in wgrad dgrad; do
  step "sweep_$dir" 170 convdispatch sweep --direction $dir --problems "$P" --dtype float16 \
    --out data/sweeps/h100/bwd_$dir.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
done
