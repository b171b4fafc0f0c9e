#!/usr/bin/env bash
# Device call 129 (2026-11-25, twenty-fourth session): what the reduce pass of every split
# config the committed benchmarks chose costs, and what launching it as a programmatic
# dependent of the main kernel saves (issue 6 fp16 forward: call 110; wgrad: call 112).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step split_reduce 540 python3 validation/gpu/probe_split_reduce.py \
  validation/results/depthwise_schedule_h100/call110/issue6_fp16/bench.csv \
  validation/results/strided_dgrad_h100/call112/bwd_wgrad/bench.csv "$RES/split_reduce.csv"
