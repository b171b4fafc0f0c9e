#!/usr/bin/env bash
# Device call 20 (2026-11-23, fourth session): call 19's one outlier again. Its model run
# timed resnet50/layer2.0.conv3/n32 through conv2d at 60 us while the same kernel run
# directly took 24.6 us in that run (and 24.5 us through conv2d in the committed run of
# the previous model): three fresh measurements of that layer.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
for i in 1 2 3; do
  step "recheck_$i" 60 python3 -m convdispatch.validation.bench_layers --suite issue2 \
    --chooser model --rep-ms 10 --only 'resnet50/layer2.0.conv3/n32/*' --out "$RES/recheck_$i"
done
