#!/usr/bin/env bash
# Device call 8 (2026-11-23): the gradient kernels (issue 7) on the H100: real-size
# correctness tests, the issue-2 layer suite's backward vs cuDNN under the rule chooser,
# and the small ResNeXt training check.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_grad_tests 150 python3 -m pytest -q -x -p no:cacheprovider tests/test_gpu_grad.py -m gpu
step bench_bwd_rule 270 python3 -m convdispatch.validation.bench_backward --suite issue2 \
  --chooser rule --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_rule"
step train_check 90 python3 -m convdispatch.validation.train_check --out "$RES/train_check" \
  --steps 30
