#!/usr/bin/env bash
# Device call 130 (2026-11-25, twenty-fourth session): call 129's reduce-pass probe again
# with wgrad_depthwise_rows signalling its dependent reduce pass at its start
# (gdc_launch_dependents), so the reduce's programs are resident before the main kernel ends.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_integration.py -m gpu -k "reduce_pass"
step split_reduce 400 python3 validation/gpu/probe_split_reduce.py \
  validation/results/depthwise_schedule_h100/call110/issue6_fp16/bench.csv \
  validation/results/strided_dgrad_h100/call112/bwd_wgrad/bench.csv "$RES/split_reduce.csv"
