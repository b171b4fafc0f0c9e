#!/usr/bin/env bash
# Device call 202 (2026-11-27, thirty-third session): backward_grouped_flat at any stride
# (X's stride-phase images, dX a phase at a time on the items' owned grid rows), fused
# wherever the wgrad choice is wgrad_grouped_flat: GPU tests, every config on the issue-2
# layers it takes (now layer2.0 and layer3.0 too) against the two directions' kernels, and
# the issue-2 grouped one backward pass benchmark, twice.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q tests/test_gpu_fused_backward.py
step fused_fp16 200 python3 validation/gpu/probe_fused_backward.py "$RES/fused_fp16.csv" float16
for run in 1 2; do
  step bwd_grouped_$run 120 python3 -m convdispatch.validation.bench_backward \
    --suite issue2 --chooser model --rep-ms 5 --directions full \
    --categories grouped --out "$RES/bwd_grouped_$run"
done
