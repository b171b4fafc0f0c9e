#!/usr/bin/env bash
# Device call 258 (2026-11-27, fortieth session): the tap-step GPU tests and the packed
# kernel's float16 channels_last GPU tests (its loop body moved into tap_operands), then
# the issue-6 grouped layers again under the retrained model, both dtypes.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 240 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_grouped_packed.py -m gpu -k "tap_steps or (gpu_configs and float16 and channels_last)"
suite grouped6_fp16 60 "" '*resnext*conv2*'
suite grouped6_bf16 60 bfloat16 '*resnext*conv2*'
