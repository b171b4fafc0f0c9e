#!/usr/bin/env bash
# Device call 200 (2026-11-27, thirty-third session): the fused backward pass in the
# dispatcher (fused_pair): its GPU tests, every config of the narrowed space on the
# issue-2 layers it takes (the rule's pick among them), and the issue-2 grouped one
# backward pass benchmark, twice.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  tests/test_gpu_fused_backward.py tests/test_gpu_grad.py -k "fused or overlap or grouped_cg4"
step fused_fp16 150 python3 validation/gpu/probe_fused_backward.py "$RES/fused_fp16.csv" float16
for run in 1 2; do
  step bwd_grouped_$run 120 python3 -m convdispatch.validation.bench_backward \
    --suite issue2 --chooser model --rep-ms 5 --directions full \
    --categories grouped --out "$RES/bwd_grouped_$run"
done
