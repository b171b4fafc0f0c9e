#!/usr/bin/env bash
# Device call 75 (2026-11-24, fourteenth session): every gradient GPU test after dgrad by
# stride phases (real-size shapes of every gradient family, autograd against torch in
# three dtypes and both layouts, conv3d backward, the compiled training step), and the
# 30-step training check of a small ResNeXt (its strided grouped layers' dgrad now by
# phases, replayed through the fast path from the second step on).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_grad_tests 330 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py
step train_check $((585 - SECONDS)) python3 -m convdispatch.validation.train_check --steps 30 \
  --out "$RES/train_check"
