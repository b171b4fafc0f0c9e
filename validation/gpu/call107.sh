#!/usr/bin/env bash
# Device call 107 (2026-11-24, twentieth session): the rest of call 106's re-sweep of the
# families whose kernel or launch changed (depthwise_span issuing every load before its
# first store; depthwise dgrad reading the filter's taps in place). Its 28 rows of one problem that ran out of GPU memory
# beside 14 other workers were taken out; the forward sweep runs 8 workers here.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --quiet"
step sweep_fwd_train 240 convdispatch sweep --direction forward --families depthwise_span \
  --problems train --out data/sweeps/h100/train.csv --rep-ms 5 --warmup-ms 2 --jobs 8 --quiet
step sweep_fwd_holdout 60 convdispatch sweep --direction forward --families depthwise_span \
  --problems holdout --out data/sweeps/h100/holdout.csv $S
step sweep_dgrad $((585 - SECONDS)) convdispatch sweep --direction dgrad \
  --families dgrad_depthwise_span,dgrad_depthwise \
  --problems resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40 \
  --dtype float16 --out data/sweeps/h100/bwd_dgrad.csv $S
