#!/usr/bin/env bash
# Device call 182 (2026-11-27, thirty-first session): what the split reduction pass costs
# the issue-2 suite's grouped wgrad choices (call 181's), as CUDA-graph replays with and
# without it (validation/gpu/probe_split_reduce.py; no forward rows): what fusing it into
# the flat-grid kernel could save (Nsight Compute: 5.8 us beside layer4.1's 9.6 us kernel,
# L2 flushed, call 177).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
printf 'problem_id,chosen,cudnn_us\n' > "$RES/no_forward.csv"
step reduce 200 python3 validation/gpu/probe_split_reduce.py "$RES/no_forward.csv" \
  validation/results/flat_copy_runs_h100/call181/bwd_grouped/bench.csv "$RES/reduce.csv"
