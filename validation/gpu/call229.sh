#!/usr/bin/env bash
# Device call 229 (2026-11-27, thirty-seventh session): grouped_packed's filter tile loaded
# in 16-byte copies where C/G x taps is no multiple of 16 (W_VEC, kernels/grouped_packed.py
# filter_vector). Its GPU tests on channels_last layers, then its sweep rows again (all
# grouped_packed rows were retired from train.csv and holdout.csv).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -W error::RuntimeWarning \
  -p no:cacheprovider tests/test_grouped_packed.py -m gpu -k "channels_last or split"
for set in holdout train; do
  step "sweep_${set}" $((570 - SECONDS)) convdispatch sweep --direction forward \
    --problems "$set" --families grouped_packed --out "data/sweeps/h100/${set}.csv" \
    --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
done
