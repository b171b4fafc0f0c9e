#!/usr/bin/env bash
# Device call 173 (2026-11-27, thirtieth session): dX and dW in order where both kernels
# fill the GPU alone (KernelFamily.fills_gpu: the flat-grid families; autograd.pair_overlaps)
# also inside a CUDA graph. The issue-2 backward suite and the issue-6 suite's grouped
# layers one whole pass, with the models of calls 170-171.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_full 170 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full"
step bwd_full_grouped6 110 python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --categories grouped \
  --out "$RES/bwd_full_grouped6"
