#!/usr/bin/env bash
# Device call 145 (2026-11-25, twenty-sixth session): dX and dW of stride-1 depthwise
# convs in one pass of wgrad_depthwise_rows (fused_dgrad): GPU tests, the probe of every
# fusable problem of the sweep sets (top-16 fused configs of the wgrad model's ranking
# against the separate picks and cuDNN), and one backward pass of the suite's depthwise
# and grouped layers. Not kept: the probe script and the kernel change are in
# validation/results/fused_depthwise_h100/fused_dgrad.patch (apply it to 201c1c0 to rerun).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "fused or overlap"
step probe 230 python3 validation/gpu/probe_fused_grads.py "$RES/fused_probe.csv" \
  mobilenet_v2,random_train:0:40,random_train:3:40,random_holdout 16
step bwd_full $((585 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --categories depthwise,grouped \
  --out "$RES/bwd_full"
