#!/usr/bin/env bash
# Device call 212 (2026-11-27, thirty-fourth session): after call 210, wgrad_grouped_flat
# goes first only at a stride (``launched_first``). The probe again on the issue-6 grouped
# layers: that default, and both kernels at once even where both families fill the GPU
# (small 3D layers: fewer programs than SMs). Then the issue-6 grouped and issue-2 one
# backward pass, and the issue-6 forward suite in bfloat16 again (call 208's ResNet-50
# layer1.0.conv2 at batch 128 took 184.1 us in the call's graph, 89.0 timed alone).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step probe_overlap 120 env PROBE_VARIANTS=default,overlap_always \
  python3 validation/gpu/probe_overlap.py "$RES/overlap.csv" issue6
step bwd_full_grouped6 100 python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped6"
step bwd_full 130 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
step issue6_bf16 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --dtype bfloat16 --out "$RES/issue6_bf16"
