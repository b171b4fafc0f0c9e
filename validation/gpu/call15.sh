#!/usr/bin/env bash
# Prepared for the next device session (written 2026-11-23, third session; NOT RUN YET):
# the compiled training step under Inductor (GPU test), the issue-2 layer suite and the
# backward benchmark with the models shipped that session (forward b5d0d5a9f030, dgrad
# a20f3b4f4102, wgrad bdf08103003f), then the wgrad sweep of random_train:3:40 that call 14
# did not reach. The 3 holdout and 68 train problems still unswept: rerun call13.sh.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
save_all() { mkdir -p "$RES/sweeps"; cp data/sweeps/h100/*.csv data/sweeps/h100/*.meta.json "$RES/sweeps/"; pack; }
trap save_all EXIT
step gpu_integration 150 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_integration.py -k training_step
step bench_model 120 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser model \
  --topk 3 --rep-ms 10 --out "$RES/issue2_model"
step bench_bwd_model 200 python3 -m convdispatch.validation.bench_backward --suite issue2 \
  --chooser model --topk 3 --rep-ms 5 --out "$RES/bwd_issue2_model"
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
step sweep_wgrad_r3 $((560 - SECONDS)) convdispatch sweep --direction wgrad --problems random_train:3:40 \
  --dtype float16 --out data/sweeps/h100/bwd_wgrad.csv $S
