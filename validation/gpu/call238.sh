#!/usr/bin/env bash
# Device call 238 (2026-11-27, thirty-eighth session): the two SD-VAE 1x1 layers whose
# whole conv2d call timed at 106-112 us as a CUDA graph in calls 236 and 237 (10-25 us
# for their kernel alone), and ResNet-50's layer1.0.conv2 at batch 128 (call 208, the same
# with implicit_gemm_tma_persistent): captures timed again with their kernels listed
# (validation/gpu/probe_call_replay.py); then the suite's SD-VAE layers twice a dtype.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step probe 200 python3 validation/gpu/probe_call_replay.py "$RES/call_replay.csv" 4 \
  sd_vae/decoder.up_blocks.3.resnets.0.conv_shortcut/n1/bfloat16 \
  sd_vae/encoder.down_blocks.1.resnets.0.conv_shortcut/n1/float16 \
  sd_vae/decoder.up_blocks.3.resnets.0.conv_shortcut/n1/float16 \
  resnet50/layer1.0.conv2/n128/bfloat16
for run in 1 2; do
  for dt in float16 bfloat16; do
    step "sdvae_${dt}_$run" 90 python3 -m convdispatch.validation.bench_layers \
      --suite issue6 --dtype $dt --chooser model --rep-ms 5 --only 'sd_vae/*' \
      --out "$RES/sdvae_${dt}_$run"
  done
done
