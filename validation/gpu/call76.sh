#!/usr/bin/env bash
# Device call 76 (2026-11-24, fifteenth session): probe of wgrad_grouped_taps's wider
# config space (FILTER_ROWS=3: a program reduces three filter rows, dY read once for
# them; num_stages=2; BLOCK_N=16 packs) over ResNeXt-50's grouped layers, into a CSV of
# its own (validation/results/grouped_wgrad_rows_h100/), then Nsight Compute profiles of
# the old and the new fastest configs on layer1.0.conv2 and layer2.1.conv2 at batch 32.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
mkdir -p "$RES/probe"
step sweep_probe 390 convdispatch sweep --direction wgrad --problems resnext50_32x4d \
  --families wgrad_grouped_taps --out "$RES/probe/taps.csv" --rep-ms 5 --warmup-ms 2 \
  --jobs 15 --dtype float16 --quiet
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for layer in layer1.0 layer2.1; do
  step "ncu_$layer" 75 "$NCU" --clock-control none --set full -k regex:wgrad_grouped_taps \
    -o "$RES/ncu_$layer" python3 validation/results/grouped_wgrad_rows_h100/ncu_target.py \
    "$RES/probe/taps.csv" "resnext50_32x4d/$layer.conv2/n32/float16"
  "$NCU" --import "$RES/ncu_$layer.ncu-rep" --page details > "$RES/ncu_$layer.txt" 2>&1
  rm -f "$RES/ncu_$layer.ncu-rep"
done
