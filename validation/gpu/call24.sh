#!/usr/bin/env bash
# Device call 24 (2026-11-23, fifth session): the live report again with the shipped
# model c5559ad6eb4a (the committed one is of a298a6d28d97), same five layers, then
# the train sweep resumed with the time left.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step live 300 convdispatch validate --live --problems resnet50,mobilenet_v2,resnext50_32x4d \
  --problems-filter 'resnet50/layer2.1.conv2/n32/*,resnet50/layer3.1.conv1/n32/*,resnet50/layer4.1.conv2/n1/*,mobilenet_v2/features.3.conv.1.0/n32/*,resnext50_32x4d/layer2.1.conv2/n32/*' \
  --model models/h100 --out "$RES/h100_live" --autotune --autotune-runs 2 --rep-ms 10 --warmup-ms 5 --jobs 15
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
step sweep_train $((540 - SECONDS)) convdispatch sweep --problems train --out data/sweeps/h100/train.csv $S
