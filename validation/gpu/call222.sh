#!/usr/bin/env bash
# Device call 222 (2026-11-27, thirty-sixth session): backward passes with the backward
# model c4f8b4deab60 deciding whether each pass fuses (trained on calls 216, 219, 220 and
# 221's rows: fused configs, 2D and 3D, and the pair of the two directions' choices). The
# issue-6 grouped layers five times (cuDNN's time moves between runs), the issue-2 suite
# and the issue-6 suite once.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap pack EXIT
grouped6() {
  step bwd_full_grouped6_$1 $2 python3 -m convdispatch.validation.bench_backward \
    --suite issue6 --chooser model --rep-ms 5 --directions full --categories grouped \
    --out "$RES/bwd_full_grouped6_$1"
}
grouped6 1 150
grouped6 2 60
step bwd_full_issue2 150 python3 -m convdispatch.validation.bench_backward \
  --suite issue2 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full_issue2"
step bwd_full_issue6 $((470 - SECONDS)) python3 -m convdispatch.validation.bench_backward \
  --suite issue6 --chooser model --rep-ms 5 --directions full --out "$RES/bwd_full_issue6"
for i in 3 4 5; do grouped6 $i $((545 - SECONDS)); done
