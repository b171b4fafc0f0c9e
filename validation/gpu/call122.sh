#!/usr/bin/env bash
# Device call 122 (2026-11-24, twenty-third session): dX and dW of one backward at once on
# side streams (autograd.gradients): the GPU tests, then the backward suite's one-pass
# direction (overlapped, in order, cuDNN's convolution_backward for both), then the
# training check.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "overlap_on_side_streams or side_streams"
step bwd_full 300 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
step train_check 90 python3 -m convdispatch.validation.train_check --steps 30 \
  --out "$RES/train_check"
