#!/usr/bin/env bash
# Device call 11 (2026-11-23): the dgrad sweep resumed (adds dgrad_depthwise), then the
# issue-2 suite's backward vs cuDNN under the rule chooser (config order measured by the
# gradient sweeps), and the small ResNeXt training check.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
save_bwd() { mkdir -p "$RES/sweeps"; cp data/sweeps/h100/bwd_dgrad* "$RES/sweeps/" 2>/dev/null; pack; }
trap save_bwd EXIT
step sweep_dgrad 100 convdispatch sweep --direction dgrad \
  --problems resnet50,resnext50_32x4d,mobilenet_v2 --dtype float16 \
  --out data/sweeps/h100/bwd_dgrad.csv --rep-ms 5 --warmup-ms 2 --jobs 15
step bench_bwd_rule 300 python3 -m convdispatch.validation.bench_backward --suite issue2 \
  --chooser rule --topk 3 --rep-ms 5 --out "$RES/bwd_issue2_rule"
step train_check 90 python3 -m convdispatch.validation.train_check --out "$RES/train_check" \
  --steps 30
