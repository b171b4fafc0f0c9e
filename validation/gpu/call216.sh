#!/usr/bin/env bash
# Device call 216 (2026-11-27, thirty-fifth session): the fused backward kernel as a
# direction of its own ("backward": dX and dW of one pass). Sweep its configs on the 2D
# grouped problems it takes (ResNeXt-50 and the random train set first, then
# ResNeXt-101; resumable), with the GPU tests of the fused pass in between.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
OUT_CSV=data/sweeps/h100/bwd_backward.csv
sweep() {
  step "sweep_$1" "$2" convdispatch sweep --direction backward --problems "$1" \
    --out "$OUT_CSV" --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
}
sweep resnext50_32x4d 300
sweep random_train 60
step gpu_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -x \
  tests/test_gpu_fused_backward.py
sweep resnext101 $((570 - SECONDS))
