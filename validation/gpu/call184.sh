#!/usr/bin/env bash
# Device call 184 (2026-11-27, thirty-second session): wgrad_grouped_flat adds short
# splits' slices in the kernel (the last program of a pack, arrival counters from
# kernels/arrivals.py), no reduction pass. GPU tests (fused split against torch, the same
# bits every run, plans, two graphs replayed at once; call 183's dependent-launch tests,
# which it ran skipped; the Gluon wgrad configs), then the fused reduction against the
# pass on the grouped layers' best split candidates (probe_fused_split.py).
# The fused reduction, its tests and probe were taken out after call 185 (slower): they are
# at commit 513ad22.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
step tests 240 env CONVDISPATCH_GPU_TESTS=1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_fused_split.py tests/test_gpu_dependent.py tests/test_gpu_grad.py \
  -k "fused or dependent or halo_wgrad or overlap"
step probe $((560 - SECONDS)) python3 validation/gpu/probe_fused_split.py "$RES/fused.csv" 4
