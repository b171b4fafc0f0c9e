#!/usr/bin/env bash
# Device call 183 (2026-11-27, thirty-second session): the split reduction pass launched
# as a programmatic dependent of the kernel before it (kernels/dependent.py). GPU tests
# of the split launches (eager, plan replay, CUDA graph: bit for bit the plain launch),
# the CUDA-graph time of every split choice of calls 180's benchmarks with it off and on
# (validation/gpu/probe_dependent_launch.py), and the issue-2 suite's one backward pass
# again (as call 180).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step tests 150 python3 -m pytest -q -x tests/test_gpu_dependent.py tests/test_gpu_grad.py \
  -k "dependent or halo_wgrad or overlap or stride_phases"
step probe 220 python3 validation/gpu/probe_dependent_launch.py \
  validation/results/flat_copy_runs_h100/call180/issue6_fp16/bench.csv \
  validation/results/flat_copy_runs_h100/call180/bwd_full/bench.csv "$RES/dependent.csv"
step bwd_full $((570 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
