#!/usr/bin/env bash
# Device call 30 (2026-11-23, seventh session): the issue-2 suite with the rule chooser
# after `choosers.wide_packed_pays` (grouped_packed's 32-channel tile on large layers),
# then Nsight Compute profiles of ResNeXt-50's stride-2 grouped layer (layer2.0.conv2,
# batch 32, fp16): our packed tile, our row-walking kernel and cuDNN.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bench_rule 130 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser rule \
  --rep-ms 10 --out "$RES/issue2_rule"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for t in grp2_packed grp2_rows grp2_cudnn; do
  step "ncu_$t" 70 "$NCU" --profile-from-start off --clock-control none --set full \
    -o "$RES/ncu_$t" python3 validation/gpu/probe.py profile "$t"
  "$NCU" --import "$RES/ncu_$t.ncu-rep" --page details > "$RES/ncu_$t.txt" 2>&1
  rm -f "$RES/ncu_$t.ncu-rep"
done
