#!/usr/bin/env bash
# Device call 65 (2026-11-24, thirteenth session): the bf16 and fp32 problems of both plans
# that calls 61-62 (fp16 only) left without rows of the new families (41 train, 25
# holdout problems, which training and the offline report then leave out), swept by
# plan; the sweep measures only the rows it lacks.
source validation/gpu/env.sh
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
S="--rep-ms 5 --warmup-ms 2 --jobs 15 --quiet"
F=pointwise_tma_persistent,implicit_gemm_tma_persistent,implicit_gemm_tma
step sweep_train 250 convdispatch sweep --problems train --families $F \
  --out data/sweeps/h100/train.csv $S
step sweep_holdout $((580 - SECONDS)) convdispatch sweep --problems holdout --families $F \
  --out data/sweeps/h100/holdout.csv $S
