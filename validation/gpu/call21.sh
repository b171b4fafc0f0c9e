#!/usr/bin/env bash
# Device call 21 (2026-11-23, fifth session): check the RegNet layer walk against
# torchvision (the GPU image has it), then complete the holdout plan and resume the
# train plan (its unfinished random problems, then the RegNet set added this session).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step torchvision_walk 60 python3 -m pytest -q -p no:cacheprovider tests/test_problems.py \
  -k torchvision
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
step sweep_holdout 120 convdispatch sweep --problems holdout --out data/sweeps/h100/holdout.csv $S
step sweep_train $((560 - SECONDS)) convdispatch sweep --problems train --out data/sweeps/h100/train.csv $S
