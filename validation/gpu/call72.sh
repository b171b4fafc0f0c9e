#!/usr/bin/env bash
# Device call 72 (2026-11-24, fourteenth session): why call 71's stream-K rows are slower
# than the persistent grid's with the same tile (0.74x on 1454 pointwise pairs). Times of
# the same config as persistent, stream-K, stream-K with runs of whole tiles (no partial
# handed over) and stream-K eager (validation/results/streamk_h100/probe.py), then Nsight
# Compute profiles of both kernels on ResNet-50 layer3.1.conv2 (batch 128) and
# layer4.1.conv1 (batch 128).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step probe 150 python3 validation/results/streamk_h100/probe.py
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for c in 3 0; do
  step "ncu_case$c" 150 "$NCU" --clock-control none --set full -k regex:tma_kernel \
    -o "$RES/ncu_case$c" python3 validation/results/streamk_h100/probe.py ncu "$c"
  "$NCU" --import "$RES/ncu_case$c.ncu-rep" --page details > "$RES/ncu_case$c.txt" 2>&1
  rm -f "$RES/ncu_case$c.ncu-rep"
done
