#!/usr/bin/env bash
# Device call 191 (2026-11-27, thirty-second session): the issue-6 forward suite in float16
# (as call 180; the forward changed only in splitk's reduction pass, now launched as a
# dependent), and the issue-2 suite's one backward pass a second time (call 190's cuDNN
# times moved up to 15% a layer against call 180's).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_full 150 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
step issue6_fp16 $((575 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/issue6_fp16"
