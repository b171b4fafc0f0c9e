#!/usr/bin/env bash
# Device call 43 (2026-11-24, ninth session): the gradient models retrained on the sweeps of
# calls 41-42 (the dgrad_<forward family> twins and wgrad_pointwise_tma): the backward
# benchmark with the models choosing, the autograd and compiled-training GPU tests, the
# 30-step training check (float32 channels_last: the twins in TF32), and the backward
# benchmark with the rule chooser on the rebuilt config orders.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_model 220 python3 -m convdispatch.validation.bench_backward --suite issue2 \
  --chooser model --topk 2 --rep-ms 5 --out "$RES/bwd_issue2_model"
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py tests/test_gpu_integration.py -k "autograd or training_step or conv3d_backward"
step train_check 60 python3 -m convdispatch.validation.train_check --steps 30 \
  --out "$RES/train_check"
step bwd_rule $((585 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser rule --rep-ms 5 --out "$RES/bwd_issue2_rule"
