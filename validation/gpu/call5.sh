#!/usr/bin/env bash
# Device call 5 (2026-11-23): the committed results. Live validation (fresh oracle
# sweep, the dispatcher's own calls, cuDNN and triton.autotune in one run) on unseen
# random problems, then the layer suite of issue 2 under the shipped model and under
# the rules.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step live 330 convdispatch validate --live --problems random_holdout:1000:8 \
  --model models/h100 --out "$RES/live" --autotune --autotune-runs 2 --rep-ms 10 --warmup-ms 5 --jobs 15
step bench_model $(( (555 - SECONDS) / 2 + 10 )) python3 -m convdispatch.validation.bench_layers \
  --suite issue2 --chooser model --topk 3 --rep-ms 10 --out "$RES/issue2_model"
step bench_rule $((555 - SECONDS)) python3 -m convdispatch.validation.bench_layers --suite issue2 \
  --chooser rule --rep-ms 10 --out "$RES/issue2_rule"
