#!/usr/bin/env bash
# Device call 264 (2026-11-27, forty-first session): grouped_flat's halo carry (an item
# takes the grid rows it shares with the item above from that item's buffer, shared
# memory to shared memory, and copies only the rest from global memory). One GPU test
# first, then grouped_flat's rows on both plans and its dgrad twin's measured again
# (retired locally; dgrad into a CSV of its own; each row checked against torch).
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_test_first 60 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_families.py -m gpu -k "grouped_flat_configs and cg4_56x56_fill"
sweep holdout 80 grouped_flat
sweep train 250 grouped_flat
step sweep_dgrad $((585 - SECONDS)) convdispatch sweep --direction dgrad --dtype float16 \
  --families dgrad_grouped_flat --out data/sweeps/h100/bwd_dgrad_flat.csv --rep-ms 5 \
  --warmup-ms 2 --jobs 14 --quiet --problems resnext50_32x4d,random_train/r0_0/n4/float16,random_train/r0_7/n32/float16,random_train/r3_1/n4/float16,random_train/r3_27/n4/float16,random_train/r3_4/n4/float16,video3d/resnext3d_50.layer1.0.conv2/n1/float16,video3d/resnext3d_50.layer1.0.conv2/n8/float16,video3d/resnext3d_50.layer2.0.conv2/n1/float16,video3d/resnext3d_50.layer2.0.conv2/n8/float16,video3d/resnext3d_50.layer2.1.conv2/n1/float16,video3d/resnext3d_50.layer2.1.conv2/n8/float16,video3d/resnext3d_50.layer3.0.conv2/n1/float16,video3d/resnext3d_50.layer3.0.conv2/n8/float16,video3d/resnext3d_50.layer3.1.conv2/n1/float16,video3d/resnext3d_50.layer3.1.conv2/n8/float16,video3d/resnext3d_50.layer4.0.conv2/n1/float16,video3d/resnext3d_50.layer4.0.conv2/n8/float16,video3d/resnext3d_50.layer4.1.conv2/n1/float16,video3d/resnext3d_50.layer4.1.conv2/n8/float16
