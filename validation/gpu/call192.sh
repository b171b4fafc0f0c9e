#!/usr/bin/env bash
# Device call 192 (2026-11-27, thirty-second session): the GPU tests call 190 ran out of
# time for: every wgrad family on the real-size shapes (each family's first and last
# config, splits included, against torch), autograd and conv3d backward, after the
# reduction pass's constant divisors.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step tests 480 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider -rA \
  tests/test_gpu_grad.py -k "(real_shapes and wgrad) or autograd_matches or conv3d_backward"
