#!/usr/bin/env bash
# Device call 211 (2026-11-27, thirty-fourth session): one backward pass of the issue-6
# suite's dense and depthwise layers (never run whole before: the gradient sweeps hold no
# VGG-16, SD-VAE or r3d_18 layer), with this session's models. An interrupted step writes
# the layers it finished.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step bwd_full_issue6 575 python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --categories dense,depthwise \
  --out "$RES/bwd_full_issue6"
