#!/usr/bin/env bash
# Device call 109 (2026-11-24, twentieth session): the rest of call 108's dgrad re-sweep,
# the backward suite's dgrad half with the dgrad model retrained on calls 106-108's rows
# (0fcc2b814c7e), then as much of the forward re-sweep as the call has time for.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --quiet"
step sweep_dgrad 150 convdispatch sweep --direction dgrad \
  --families dgrad_depthwise_span,dgrad_depthwise \
  --problems resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40 \
  --dtype float16 --out data/sweeps/h100/bwd_dgrad.csv --jobs 8 $S
step bwd_dgrad 210 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --topk 2 --rep-ms 5 --directions dgrad --out "$RES/bwd_dgrad"
step sweep_fwd_holdout 40 convdispatch sweep --direction forward --families depthwise_span \
  --problems holdout --out data/sweeps/h100/holdout.csv --jobs 12 $S
step sweep_fwd_train $((585 - SECONDS)) convdispatch sweep --direction forward \
  --families depthwise_span --problems train --out data/sweeps/h100/train.csv --jobs 12 $S
