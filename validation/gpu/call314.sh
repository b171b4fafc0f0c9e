#!/usr/bin/env bash
# Device call 314 (2026-12-07, fiftieth session; the H100 of call 313, still warm): the
# forward model retrained on call 313's rows (feature schema v22: the knob TMA), trained
# here on 16 threads with the ranker alone (the shipped model is retrained on the CPU with
# every method; the guarded ranker's trees are the same), then the issue-6 suite under it
# in float16 and bfloat16. Needs lightgbm's wheel carried in .whl.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site || exit 1
# The rows of call 313 on this machine (the tree sent holds them too once fetched).
[ -f out/sweeps/train.csv ] && cp out/sweeps/* data/sweeps/h100/
wc -l data/sweeps/h100/{train,holdout}.csv | tee "$RES/rows.txt"
step train 150 convdispatch train --sweeps data/sweeps/h100/train.csv \
  data/sweeps/h100/holdout.csv --out models/h100 --holdout-sets random_holdout,resnext50_32x4d,sd_vae \
  --seed 1 --threads 16 --methods lgbm_lambdarank
mkdir -p "$RES/model" && cp models/h100/*.txt models/h100/*.json "$RES/model/"
grep -q '"schema_version": 22' models/h100/schema.json || { echo "no v22 model"; exit 1; }
suite issue6_fp16 205
suite issue6_bf16 $((590 - SECONDS)) bfloat16
