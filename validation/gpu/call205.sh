#!/usr/bin/env bash
# Device call 205 (2026-11-27, thirty-fourth session): the flat-grid grouped kernels in 3D
# (grouped_flat and its dgrad twin sum an item's depth taps; wgrad_grouped_flat gives a
# program one depth tap's plane). Their GPU tests (3D cases, every forward config with the
# epilogue, every wgrad tile; the fused backward kernel after its filter-tile change), then
# their candidates on every 3D grouped problem of the sweeps (resumable, appended).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 200 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  tests/test_gpu_families.py -k "grouped_flat_configs" \
  tests/test_gpu_grad.py -k "halo_wgrad_configs or grouped3d" tests/test_gpu_fused_backward.py
W=random_train/r0_7/n32/float16,video3d/resnext3d_50.layer4.0.conv2/n8/float16,video3d/resnext3d_50.layer4.0.conv2/n1/float16,video3d/resnext3d_50.layer2.1.conv2/n1/float16,video3d/resnext3d_50.layer4.1.conv2/n8/float16,video3d/resnext3d_50.layer2.0.conv2/n1/float16,video3d/resnext3d_50.layer1.0.conv2/n1/float16,video3d/resnext3d_50.layer2.0.conv2/n8/float16,video3d/resnext3d_50.layer4.1.conv2/n1/float16,video3d/resnext3d_50.layer2.1.conv2/n8/float16,video3d/resnext3d_50.layer3.1.conv2/n1/float16,video3d/resnext3d_50.layer3.0.conv2/n1/float16,video3d/resnext3d_50.layer3.0.conv2/n8/float16,video3d/resnext3d_50.layer1.0.conv2/n8/float16,video3d/resnext3d_50.layer3.1.conv2/n8/float16
D=random_train/r0_7/n32/float16,video3d/resnext3d_50.layer4.0.conv2/n8/float16,video3d/resnext3d_50.layer4.0.conv2/n1/float16,video3d/resnext3d_50.layer2.1.conv2/n1/float16,video3d/resnext3d_50.layer4.1.conv2/n8/float16,video3d/resnext3d_50.layer2.0.conv2/n1/float16,video3d/resnext3d_50.layer1.0.conv2/n1/float16,video3d/resnext3d_50.layer2.0.conv2/n8/float16,video3d/resnext3d_50.layer4.1.conv2/n1/float16,video3d/resnext3d_50.layer2.1.conv2/n8/float16,video3d/resnext3d_50.layer3.1.conv2/n1/float16,video3d/resnext3d_50.layer3.0.conv2/n1/float16,video3d/resnext3d_50.layer3.0.conv2/n8/float16,video3d/resnext3d_50.layer1.0.conv2/n8/float16,video3d/resnext3d_50.layer3.1.conv2/n8/float16
T=video3d/resnext3d_50.layer2.1.conv2/n1/float16,video3d/resnext3d_50.layer2.0.conv2/n1/float16,video3d/resnext3d_50.layer1.0.conv2/n1/float16,video3d/resnext3d_50.layer2.0.conv2/n8/float16,video3d/resnext3d_50.layer2.1.conv2/n8/float16,video3d/resnext3d_50.layer3.1.conv2/n1/float16,random_train/r0_7/n32/float16,video3d/resnext3d_50.layer3.0.conv2/n1/float16,video3d/resnext3d_50.layer3.0.conv2/n8/float16,video3d/resnext3d_50.layer1.0.conv2/n8/float16,video3d/resnext3d_50.layer3.1.conv2/n8/float16,video3d/resnext3d_50.layer4.0.conv2/n8/float16,video3d/resnext3d_50.layer4.0.conv2/n1/float16,video3d/resnext3d_50.layer4.1.conv2/n8/float16,video3d/resnext3d_50.layer4.1.conv2/n1/float16
H=random_holdout/r1001_6/n1/bfloat16,random_holdout/r1000_13/n8/float16
step sweep_wgrad 90 convdispatch sweep --direction wgrad --problems "$W" --families wgrad_grouped_flat \
  --out data/sweeps/h100/bwd_wgrad.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
step sweep_dgrad 90 convdispatch sweep --direction dgrad --problems "$D" --families dgrad_grouped_flat \
  --out data/sweeps/h100/bwd_dgrad.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
step sweep_train 90 convdispatch sweep --problems "$T" --families grouped_flat \
  --out data/sweeps/h100/train.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
step sweep_holdout 40 convdispatch sweep --problems "$H" --families grouped_flat \
  --out data/sweeps/h100/holdout.csv --rep-ms 5 --warmup-ms 2 --jobs 14 --quiet
