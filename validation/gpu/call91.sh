#!/usr/bin/env bash
# Device call 91 (2026-11-24, eighteenth session): the issue-6 suite in float16 with the
# forward model of call 90 (049a6e591c4e) and with the one before it (eb324e9df14e; run
# with `carry: [.oldmodel]`, that folder made here by `git show a998db8:models/h100/F`
# for each file F), in one session of the GPU: call 90's dense
# geomean (0.994) sat below call 88's (1.006) while 200 of the 215 dense choices were
# the same, so this separates the model's change from the run's.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap pack EXIT
step new_fp16 200 python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/new_fp16"
mkdir -p /tmp/newmodel && cp models/h100/*.* /tmp/newmodel/
cp .oldmodel/model.txt .oldmodel/meta.json .oldmodel/schema.json .oldmodel/guard.txt models/h100/
step old_fp16 $((585 - SECONDS)) python3 -m convdispatch.validation.bench_layers \
  --suite issue6 --chooser model --rep-ms 5 --out "$RES/old_fp16"
cp /tmp/newmodel/* models/h100/
