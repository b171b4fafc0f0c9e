#!/usr/bin/env bash
# Device call 32 (2026-11-23, eighth session): the implicit-GEMM tap loop without
# per-step divisions (counters), with each row's filter-origin offset hoisted out of
# the loop and one unsigned compare per bound (`kernels/common.tap_at`), in
# implicit_gemm / grouped_gemm / splitk (igemm_kernel) and grouped_packed. GPU tests of
# those families, the issue-2 suite with the rule chooser, then the changed families
# re-swept (their old rows were set aside with `convdispatch retire`), holdout first.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
step gpu_test 110 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider -m gpu \
  tests/test_grouped_packed.py tests/test_gpu_families.py \
  -k "channels_last or implicit_gemm or splitk or grouped_gemm or conv3d"
step bench_rule 110 python3 -m convdispatch.validation.bench_layers --suite issue2 --chooser rule \
  --rep-ms 10 --out "$RES/issue2_rule"
S="--rep-ms 5 --warmup-ms 2 --jobs 15"
F=grouped_packed,implicit_gemm,grouped_gemm,splitk
step sweep_holdout $((400 - SECONDS)) convdispatch sweep --problems holdout --families $F \
  --out data/sweeps/h100/holdout.csv $S
step sweep_train $((560 - SECONDS)) convdispatch sweep --problems train --families $F \
  --out data/sweeps/h100/train.csv $S
