#!/usr/bin/env bash
# Device call 33 (2026-11-23, eighth session): call 32's re-sweep of the families whose
# tap loop changed, resumed on the train plan (finished rows are skipped).
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
F=grouped_packed,implicit_gemm,grouped_gemm,splitk
step sweep_holdout 120 convdispatch sweep --problems holdout --families $F \
  --out data/sweeps/h100/holdout.csv $S
step sweep_train $((570 - SECONDS)) convdispatch sweep --problems train --families $F \
  --out data/sweeps/h100/train.csv $S
