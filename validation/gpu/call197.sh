#!/usr/bin/env bash
# Device call 197 (2026-11-27, thirty-second session): call 196 again (a second sample of cuDNN), the issue-2 suite's grouped and
# depthwise one backward pass after overlapped gradients launch dW's kernels first where
# the wgrad family asks (overlap_first: call 195 measured it 0.71-0.95x on the strided
# grouped layers and every depthwise layer).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_full 200 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full \
  --categories grouped,depthwise --out "$RES/bwd_full"
