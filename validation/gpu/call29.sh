#!/usr/bin/env bash
# Device call 29 (2026-11-23, seventh session): grouped_packed's L1_TAPS configs (8-byte
# cp.async.ca input copies that stay in L1). GPU tests of the family (channels_last),
# a same-run probe of every grouped_packed / grouped_rows config and cuDNN on
# ResNeXt-50's grouped layers, then the new configs swept on the holdout and train plans.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_test 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_grouped_packed.py -m gpu -k channels_last
step probe 170 python3 validation/gpu/probe_packed.py "$RES/probe_packed.csv"
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
step sweep_holdout 80 convdispatch sweep --problems holdout --families grouped_packed \
  --out data/sweeps/h100/holdout.csv $S
step sweep_train $((560 - SECONDS)) convdispatch sweep --problems train --families grouped_packed \
  --out data/sweeps/h100/train.csv $S
