#!/usr/bin/env bash
# Device call 194 (2026-11-27, thirty-second session): kernel timelines of ResNeXt-50
# layer4.0's backward pass as a CUDA graph captures it (dX and dW overlapped), which is
# 31-36% slower than in order in calls 180, 190 and 191, against layer3.0 and layer4.1,
# where overlapping helps (probe_trace.py --overlapped).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
P=resnext50_32x4d
step trace 200 python3 validation/gpu/probe_trace.py --overlapped "$RES/trace_overlapped.csv" \
  $P/layer4.0.conv2/n32/float16 $P/layer3.0.conv2/n32/float16 $P/layer4.1.conv2/n32/float16
