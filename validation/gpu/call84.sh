#!/usr/bin/env bash
# Device call 84 (2026-11-24, sixteenth session): splitk's reduce pass tiled for about
# 256 programs (reduce_block). The split-reduce probe again (call 82 measured the old
# pass at 4-12 us), then the re-sweep of splitk (train and holdout plans, every dtype
# the plans hold) and of its dgrad twin dgrad_splitk (the gradient plan, float16),
# whose rows `convdispatch retire` set aside.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --quiet"
step split_reduce 120 python3 validation/gpu/probe_split_reduce.py \
  validation/results/issue6_h100/bench.csv \
  validation/results/issue7_h100/call79/bwd_issue2_model/bench.csv "$RES/split_reduce.csv"
step sweep_train 200 convdispatch sweep --direction forward --families splitk \
  --problems train --out data/sweeps/h100/train.csv $S
step sweep_holdout 60 convdispatch sweep --direction forward --families splitk \
  --problems holdout --out data/sweeps/h100/holdout.csv $S
step sweep_dgrad $((585 - SECONDS)) convdispatch sweep --direction dgrad \
  --families dgrad_splitk --problems resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40 \
  --out data/sweeps/h100/bwd_dgrad.csv --dtype float16 $S
