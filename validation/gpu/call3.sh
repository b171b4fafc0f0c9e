#!/usr/bin/env bash
# Device call 3 (2026-11-23): roofline probes and Nsight Compute profiles of the
# memory-bound families (depthwise, grouped) and one compute-bound dense layer next
# to cuDNN, then resume the sweep plans.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step probe_time 90 python3 validation/gpu/probe.py time
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
for t in dw_ours dw_direct dw_cudnn grp_ours grp_cudnn dense_ours dense_cudnn; do
  step "ncu_$t" 40 "$NCU" --profile-from-start off --clock-control none --set full \
    -o "$RES/ncu_$t" python3 validation/gpu/probe.py profile "$t"
  "$NCU" --import "$RES/ncu_$t.ncu-rep" --page details > "$RES/ncu_$t.txt" 2>&1
done
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --quiet"
# The sweeps get what is left of 540 s (the call's limit is 600 s), train first.
left=$((540 - SECONDS))
step sweep_train $((left * 3 / 4)) convdispatch sweep --problems train --out data/sweeps/h100/train.csv $S
step sweep_holdout $((540 - SECONDS)) convdispatch sweep --problems holdout --out data/sweeps/h100/holdout.csv $S
