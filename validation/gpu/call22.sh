#!/usr/bin/env bash
# Device call 22 (2026-11-23, fifth session): the torchvision walk check again (call 21's
# failed building RegNet on the meta device), then resume the train plan.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step torchvision_walk 60 python3 -m pytest -q -p no:cacheprovider tests/test_problems.py \
  -k torchvision
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
step sweep_train $((560 - SECONDS)) convdispatch sweep --problems train --out data/sweeps/h100/train.csv $S
