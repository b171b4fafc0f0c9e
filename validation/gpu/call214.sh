#!/usr/bin/env bash
# Device call 214 (2026-11-27, thirty-fourth session): grouped_packed's dgrad twin now
# offers the forward kernel's split configs (they were held back as unswept). Their GPU
# tests, then the sweep of those configs on every problem of bwd_dgrad.csv where the twin
# offers them (19 problems, 226 rows; resumable, appended).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_tests 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -rA tests/test_gpu_grad.py \
  -k "dgrad_grouped_packed_split or (grad_families_on_real_shapes and grouped3d and dgrad)"
S=random_train/r0_37/n52/float16,resnext50_32x4d/layer2.1.conv2/n1/float16,resnext50_32x4d/layer4.1.conv2/n8/float16,resnext50_32x4d/layer1.0.conv2/n1/float16,resnext50_32x4d/layer2.1.conv2/n8/float16,resnext50_32x4d/layer3.1.conv2/n1/float16,resnext50_32x4d/layer3.1.conv2/n8/float16,resnext50_32x4d/layer4.1.conv2/n1/float16,resnext50_32x4d/layer4.1.conv2/n32/float16,random_train/r0_34/n1/float16,random_train/r3_1/n4/float16,random_train/r3_4/n4/float16,video3d/resnext3d_50.layer2.1.conv2/n1/float16,video3d/resnext3d_50.layer4.1.conv2/n8/float16,video3d/resnext3d_50.layer1.0.conv2/n1/float16,video3d/resnext3d_50.layer4.1.conv2/n1/float16,video3d/resnext3d_50.layer2.1.conv2/n8/float16,video3d/resnext3d_50.layer3.1.conv2/n1/float16,video3d/resnext3d_50.layer3.1.conv2/n8/float16
step sweep_dgrad 200 convdispatch sweep --direction dgrad --problems "$S" \
  --families dgrad_grouped_packed --out data/sweeps/h100/bwd_dgrad.csv --rep-ms 5 \
  --warmup-ms 2 --jobs 14 --quiet
