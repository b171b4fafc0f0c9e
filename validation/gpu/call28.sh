#!/usr/bin/env bash
# Device call 28 (2026-11-23, sixth session), shipped models as committed (forward
# 36f4ee2e194c, feature schema v7): the issue-2 and issue-6 suites with the model
# again (call 27's run had ~100-190 us stalls on 8 of its 309 measurements), the live
# report (same five layers as call 24), then the backward benchmark with the gradient
# models retrained on schema v7 (the wgrad model now ships with a guard).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bench_model 110 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser model \
  --topk 2 --rep-ms 10 --out "$RES/issue2_model"
step issue6_model 200 python3 -m convdispatch.validation.bench_layers --suite issue6 \
  --chooser model --rep-ms 5 --out "$RES/issue6_model"
step live 280 convdispatch validate --live --problems resnet50,mobilenet_v2,resnext50_32x4d \
  --problems-filter 'resnet50/layer2.1.conv2/n32/*,resnet50/layer3.1.conv1/n32/*,resnet50/layer4.1.conv2/n1/*,mobilenet_v2/features.3.conv.1.0/n32/*,resnext50_32x4d/layer2.1.conv2/n32/*' \
  --model models/h100 --out "$RES/h100_live" --autotune --autotune-runs 2 --rep-ms 10 --warmup-ms 5 --jobs 15
step bench_bwd_model $((575 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
