#!/usr/bin/env bash
# Device call 268 (2026-11-28, forty-second session): grouped_flat's row-reuse schedule
# (kernels/flat_grid.py reuse_plan; each run of 16 rows loaded once for every tap that
# reads it, on a grid rounded to 16 columns). The forward rows whose config now takes it
# (convdispatch retire --row-reuse-only) and all of the dgrad twin's were retired locally
# and are measured again here; the holdout plan first, and the rest only if its new rows
# are all right.
source validation/gpu/env.sh
rm -rf "$RES" && mkdir -p "$RES"
envinfo | tee "$RES/env.txt"
trap save_sweeps EXIT
sweep holdout 80 grouped_flat
python3 - <<'PY' || exit 1
import pandas as pd
d = pd.read_csv("data/sweeps/h100/holdout.csv")
f = d[d.family == "grouped_flat"]
print("holdout grouped_flat rows:", len(f), "not ok:", int((f.ok != 1).sum()))
raise SystemExit(int((f.ok != 1).sum() > 0))
PY
sweep train 260 grouped_flat
step sweep_dgrad 200 convdispatch sweep --direction dgrad --dtype float16 \
  --families dgrad_grouped_flat --out data/sweeps/h100/bwd_dgrad_flat.csv --rep-ms 5 \
  --warmup-ms 2 --jobs 14 --quiet --problems resnext50_32x4d,random_train/r0_0/n4/float16,random_train/r0_7/n32/float16,random_train/r3_1/n4/float16,random_train/r3_27/n4/float16,random_train/r3_4/n4/float16,video3d/resnext3d_50.layer1.0.conv2/n1/float16,video3d/resnext3d_50.layer1.0.conv2/n8/float16,video3d/resnext3d_50.layer2.0.conv2/n1/float16,video3d/resnext3d_50.layer2.0.conv2/n8/float16,video3d/resnext3d_50.layer2.1.conv2/n1/float16,video3d/resnext3d_50.layer2.1.conv2/n8/float16,video3d/resnext3d_50.layer3.0.conv2/n1/float16,video3d/resnext3d_50.layer3.0.conv2/n8/float16,video3d/resnext3d_50.layer3.1.conv2/n1/float16,video3d/resnext3d_50.layer3.1.conv2/n8/float16,video3d/resnext3d_50.layer4.0.conv2/n1/float16,video3d/resnext3d_50.layer4.0.conv2/n8/float16,video3d/resnext3d_50.layer4.1.conv2/n1/float16,video3d/resnext3d_50.layer4.1.conv2/n8/float16
