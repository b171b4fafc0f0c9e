#!/usr/bin/env bash
# Device call 262 (2026-11-27, forty-first session): grouped_flat's epilogue stores 16
# bytes a thread (8 channels) from the copy layout instead of 4 from the mma layout. Its
# rows and its dgrad twin's were retired locally (convdispatch retire) and are measured
# again here: forward on both plans, dgrad into a CSV of its own (bwd_dgrad.csv stays
# off the device: the tree must travel under 64 MiB). GPU tests with the time left.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
sweep holdout 90 grouped_flat
sweep train 300 grouped_flat
step sweep_dgrad 90 convdispatch sweep --direction dgrad --dtype float16 \
  --families dgrad_grouped_flat --out data/sweeps/h100/bwd_dgrad_flat.csv --rep-ms 5 \
  --warmup-ms 2 --jobs 14 --quiet --problems resnext50_32x4d,random_train/r0_0/n4/float16,random_train/r0_7/n32/float16,random_train/r3_1/n4/float16,random_train/r3_27/n4/float16,random_train/r3_4/n4/float16,video3d/resnext3d_50.layer1.0.conv2/n1/float16,video3d/resnext3d_50.layer1.0.conv2/n8/float16,video3d/resnext3d_50.layer2.0.conv2/n1/float16,video3d/resnext3d_50.layer2.0.conv2/n8/float16,video3d/resnext3d_50.layer2.1.conv2/n1/float16,video3d/resnext3d_50.layer2.1.conv2/n8/float16,video3d/resnext3d_50.layer3.0.conv2/n1/float16,video3d/resnext3d_50.layer3.0.conv2/n8/float16,video3d/resnext3d_50.layer3.1.conv2/n1/float16,video3d/resnext3d_50.layer3.1.conv2/n8/float16,video3d/resnext3d_50.layer4.0.conv2/n1/float16,video3d/resnext3d_50.layer4.0.conv2/n8/float16,video3d/resnext3d_50.layer4.1.conv2/n1/float16,video3d/resnext3d_50.layer4.1.conv2/n8/float16
step gpu_tests $((560 - SECONDS)) env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q \
  -p no:cacheprovider tests/test_gpu_families.py tests/test_gpu_grad.py -m gpu \
  -k "grouped_flat_configs or (real_shapes and grouped and dgrad)"
