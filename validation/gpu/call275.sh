#!/usr/bin/env bash
# Device call 275 (2026-11-28, forty-third session): grouped_flat loads its filter tiles a
# plane at once (flat_grid.filter_tiles' BURST; probe: call 274). Its rows and its dgrad
# twin's were retired locally (convdispatch retire) and are measured again here: forward
# on both plans, dgrad into a CSV of its own (bwd_dgrad.csv stays off the device: the tree
# must travel under 64 MiB).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
sweep holdout 100 grouped_flat
sweep train 320 grouped_flat
step sweep_dgrad $((585 - SECONDS)) convdispatch sweep --direction dgrad --dtype float16 \
  --families dgrad_grouped_flat --out data/sweeps/h100/bwd_dgrad_flat.csv --rep-ms 5 \
  --warmup-ms 2 --jobs 14 --quiet --problems random_train/r0_0/n4/float16,random_train/r0_7/n32/float16,random_train/r3_1/n4/float16,random_train/r3_27/n4/float16,random_train/r3_4/n4/float16,resnext50_32x4d/layer1.0.conv2/n1/float16,resnext50_32x4d/layer1.0.conv2/n128/float16,resnext50_32x4d/layer1.0.conv2/n32/float16,resnext50_32x4d/layer1.0.conv2/n8/float16,resnext50_32x4d/layer2.0.conv2/n1/float16,resnext50_32x4d/layer2.0.conv2/n128/float16,resnext50_32x4d/layer2.0.conv2/n32/float16,resnext50_32x4d/layer2.0.conv2/n8/float16,resnext50_32x4d/layer2.1.conv2/n1/float16,resnext50_32x4d/layer2.1.conv2/n128/float16,resnext50_32x4d/layer2.1.conv2/n32/float16,resnext50_32x4d/layer2.1.conv2/n8/float16,resnext50_32x4d/layer3.0.conv2/n1/float16,resnext50_32x4d/layer3.0.conv2/n128/float16,resnext50_32x4d/layer3.0.conv2/n32/float16,resnext50_32x4d/layer3.0.conv2/n8/float16,resnext50_32x4d/layer3.1.conv2/n1/float16,resnext50_32x4d/layer3.1.conv2/n128/float16,resnext50_32x4d/layer3.1.conv2/n32/float16,resnext50_32x4d/layer3.1.conv2/n8/float16,resnext50_32x4d/layer4.0.conv2/n1/float16,resnext50_32x4d/layer4.0.conv2/n128/float16,resnext50_32x4d/layer4.0.conv2/n32/float16,resnext50_32x4d/layer4.0.conv2/n8/float16,resnext50_32x4d/layer4.1.conv2/n1/float16,resnext50_32x4d/layer4.1.conv2/n128/float16,resnext50_32x4d/layer4.1.conv2/n32/float16,resnext50_32x4d/layer4.1.conv2/n8/float16,video3d/resnext3d_50.layer1.0.conv2/n1/float16,video3d/resnext3d_50.layer1.0.conv2/n8/float16,video3d/resnext3d_50.layer2.0.conv2/n1/float16,video3d/resnext3d_50.layer2.0.conv2/n8/float16,video3d/resnext3d_50.layer2.1.conv2/n1/float16,video3d/resnext3d_50.layer2.1.conv2/n8/float16,video3d/resnext3d_50.layer3.0.conv2/n1/float16,video3d/resnext3d_50.layer3.0.conv2/n8/float16,video3d/resnext3d_50.layer3.1.conv2/n1/float16,video3d/resnext3d_50.layer3.1.conv2/n8/float16,video3d/resnext3d_50.layer4.0.conv2/n1/float16,video3d/resnext3d_50.layer4.0.conv2/n8/float16,video3d/resnext3d_50.layer4.1.conv2/n1/float16,video3d/resnext3d_50.layer4.1.conv2/n8/float16
