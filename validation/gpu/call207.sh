#!/usr/bin/env bash
# Device call 207 (2026-11-27, thirty-fourth session): the issue-6 forward suite in float16
# with the forward model retrained on call 205's 3D grouped_flat rows (6374aaca6542), and
# the issue-6 grouped backward pass a second time (call 206's ResNeXt3D-50 layer3.1 at
# batch 8 took 31.5 us overlapped and 19.1 in order).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_full_grouped6 100 python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped6"
step issue6_fp16 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
