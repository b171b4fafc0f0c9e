#!/usr/bin/env bash
# Device call 4 (2026-11-23): probes of the new grouped FMA path and the small
# depthwise tiles (with one Nsight Compute profile), then resume the sweep plans:
# grouped_direct's rows for 2..16 channels a group (new kernel), the small
# depthwise tiles, and the holdout problems not swept yet.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step probe_time 90 python3 validation/gpu/probe.py time
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for t in grp_fma dw_small; do
  step "ncu_$t" 40 "$NCU" --profile-from-start off --clock-control none --set full \
    -o "$RES/ncu_$t" python3 validation/gpu/probe.py profile "$t"
  "$NCU" --import "$RES/ncu_$t.ncu-rep" --page details > "$RES/ncu_$t.txt" 2>&1
done
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --quiet"
left=$((545 - SECONDS))
step sweep_holdout $((left / 2)) convdispatch sweep --problems holdout --out data/sweeps/h100/holdout.csv $S
step sweep_train $((545 - SECONDS)) convdispatch sweep --problems train --out data/sweeps/h100/train.csv $S
