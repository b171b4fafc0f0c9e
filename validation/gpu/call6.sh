#!/usr/bin/env bash
# Device call 6 (2026-11-23): the committed results, on a GPU nothing else uses.
# The layer suite of issue 2 under the shipped model and under the rules, then live
# validation (fresh oracle sweep, the dispatcher's own calls, cuDNN and
# triton.autotune in one run) on real-network layers: dense 3x3, 1x1, batch-1
# split-K, depthwise and grouped. Live runs last: an interrupted run may leave
# workers behind that would disturb later timings.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bench_model 120 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser model \
  --topk 3 --rep-ms 10 --out "$RES/issue2_model"
step bench_rule 80 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser rule \
  --rep-ms 10 --out "$RES/issue2_rule"
LIVE='resnet50/layer2.1.conv2/n32/*,resnet50/layer3.1.conv1/n32/*,resnet50/layer4.1.conv2/n1/*'
LIVE="$LIVE,mobilenet_v2/features.3.conv.1.0/n32/*,resnext50_32x4d/layer2.1.conv2/n32/*"
step live $((560 - SECONDS)) convdispatch validate --live --problems resnet50,mobilenet_v2,resnext50_32x4d \
  --problems-filter "$LIVE" --model models/h100 --out "$RES/live" --autotune --autotune-runs 2 \
  --rep-ms 10 --warmup-ms 5 --jobs 15
