#!/usr/bin/env bash
# Device call 263 (2026-11-27, forty-first session): the rest of call 262's dgrad sweep
# (resumed: the rows it finished travel in bwd_dgrad_flat.csv), then the issue-6 suite in
# float16 and bfloat16 under the forward model retrained on call 262's grouped_flat rows.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step sweep_dgrad 120 convdispatch sweep --direction dgrad --dtype float16 \
  --families dgrad_grouped_flat --out data/sweeps/h100/bwd_dgrad_flat.csv --rep-ms 5 \
  --warmup-ms 2 --jobs 14 --quiet --problems resnext50_32x4d,random_train/r0_0/n4/float16,random_train/r0_7/n32/float16,random_train/r3_1/n4/float16,random_train/r3_27/n4/float16,random_train/r3_4/n4/float16,video3d/resnext3d_50.layer1.0.conv2/n1/float16,video3d/resnext3d_50.layer1.0.conv2/n8/float16,video3d/resnext3d_50.layer2.0.conv2/n1/float16,video3d/resnext3d_50.layer2.0.conv2/n8/float16,video3d/resnext3d_50.layer2.1.conv2/n1/float16,video3d/resnext3d_50.layer2.1.conv2/n8/float16,video3d/resnext3d_50.layer3.0.conv2/n1/float16,video3d/resnext3d_50.layer3.0.conv2/n8/float16,video3d/resnext3d_50.layer3.1.conv2/n1/float16,video3d/resnext3d_50.layer3.1.conv2/n8/float16,video3d/resnext3d_50.layer4.0.conv2/n1/float16,video3d/resnext3d_50.layer4.0.conv2/n8/float16,video3d/resnext3d_50.layer4.1.conv2/n1/float16,video3d/resnext3d_50.layer4.1.conv2/n8/float16
suite issue6_fp16 230
suite issue6_bf16 $((590 - SECONDS)) bfloat16
