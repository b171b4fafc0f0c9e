#!/usr/bin/env bash
# Device call 148 (2026-11-25, twenty-seventh session): wgrad_depthwise_span's 8-row
# items (added after call 147's sweep picked the 4-row ones, the largest then) swept,
# its real-shape GPU tests on the new tiles, and Nsight Compute on MobileNetV2's
# features.3 at batch 32: the best span config, the best wgrad_depthwise_rows config
# and cuDNN (kernel time, DRAM throughput, occupancy, issue).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_span_tests 120 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_grad.py -m gpu -k "real_shapes and wgrad and depthwise"
step sweep_span 300 convdispatch sweep --direction wgrad \
  --families wgrad_depthwise_span \
  --problems resnet50,resnext50_32x4d,mobilenet_v2,random_train:0:40,random_train:3:40 \
  --dtype float16 --out data/sweeps/h100/bwd_wgrad.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
PID=mobilenet_v2/features.3.conv.1.0/n32/float16
best() {  # the fastest swept candidate of family $1 on $PID
  python3 -c "import pandas as pd, sys; d = pd.read_csv('data/sweeps/h100/bwd_wgrad.csv', low_memory=False); d = d[(d.problem_id == '$PID') & (d.family == '$1') & (d.ok == 1)]; r = d.loc[d.latency_us.idxmin()]; print(f'{r.family}:{r.config}')"
}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for fam in wgrad_depthwise_span wgrad_depthwise_rows cudnn; do
  cand=$([ $fam = cudnn ] || best $fam)
  echo "$fam: $cand" | tee -a "$RES/ncu_targets.txt"
  step "ncu_$fam" 90 "$NCU" --profile-from-start off --clock-control none \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section LaunchStats --section SchedulerStats --section WarpStateStats \
    python3 validation/gpu/profile_grad.py "$PID" wgrad $cand
done
