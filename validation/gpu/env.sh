# Source from the repository root on a GPU machine (the device tool): makes this
# checkout importable as `convdispatch` without installing it (that machine has
# no network), and gives every step one place for its results.
export PYTHONUNBUFFERED=1
mkdir -p /tmp/pp && ln -sfn "$PWD" /tmp/pp/convdispatch
export PYTHONPATH=/tmp/pp${PYTHONPATH:+:$PYTHONPATH}
export RES=${RES:-/tmp/res}
mkdir -p "$RES"
# The console command, as `pip install` would make it (also usable under timeout).
mkdir -p /tmp/pp/bin
printf '#!/bin/sh\nexec python3 -m convdispatch.cli "$@"\n' > /tmp/pp/bin/convdispatch
chmod +x /tmp/pp/bin/convdispatch
export PATH=/tmp/pp/bin:$PATH
# step NAME SECONDS CMD...: run one step with a time limit, log it, go on if it fails.
step() {
  local name=$1 secs=$2; shift 2
  # (timeout 0 would mean no limit: a step left no time is skipped)
  if (( secs <= 0 )); then echo "== $name skipped: no time left"; return; fi
  echo "== $name ($(date -u +%T))"
  timeout -s INT "$secs" "$@" > "$RES/$name.log" 2>&1
  echo "== $name rc=$? ($(date -u +%T))"; tail -n 15 "$RES/$name.log"
}
# suite NAME SECONDS [DTYPE [GLOB]]: step NAME, the issue-6 layer benchmark under the shipped
# model into $RES/NAME (DTYPE empty: float16; GLOB: --only).
suite() {
  local name=$1 secs=$2 dtype=${3:-} only=${4:-}
  step "$name" "$secs" python3 -m convdispatch.validation.bench_layers --suite issue6 \
    ${dtype:+--dtype "$dtype"} --chooser model --rep-ms 5 ${only:+--only "$only"} \
    --out "$RES/$name"
}
# sweep PLAN SECONDS FAMILIES: step sweep_PLAN, the forward sweep of FAMILIES (comma list)
# on plan PLAN (train or holdout) into its CSV, appending (rows already there are kept).
sweep() {
  local plan=$1 secs=$2 families=$3
  step "sweep_$plan" "$secs" convdispatch sweep --direction forward --problems "$plan" \
    --families "$families" --out "data/sweeps/h100/$plan.csv" --rep-ms 5 --warmup-ms 2 \
    --jobs 14 --quiet
}
# ncu_probe TARGET SECONDS: step ncu_TARGET, Nsight Compute (full set, clocks as found) on
# validation/gpu/probe.py's profile window of TARGET; its details page into ncu_TARGET.txt.
ncu_probe() {
  local target=$1 secs=$2
  local ncu
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  step "ncu_$target" "$secs" "$ncu" --profile-from-start off --clock-control none --set full \
    -o "$RES/ncu_$target" python3 validation/gpu/probe.py profile "$target"
  "$ncu" --import "$RES/ncu_$target.ncu-rep" --page details > "$RES/ncu_$target.txt" 2>&1
  rm -f "$RES/ncu_$target.ncu-rep"
}
# pack: everything under $RES into one archive under $OUT (the device tool returns 8 files).
pack() { tar czf "${OUT:-/tmp}/results.tgz" -C "$RES" . && ls -la "${OUT:-/tmp}"; }
# save_sweeps: the sweep CSVs and sidecars into $RES, then pack (an EXIT trap).
save_sweeps() {
  mkdir -p "$RES/sweeps" && cp data/sweeps/h100/*.csv data/sweeps/h100/*.meta.json "$RES/sweeps/"
  rm -f "$RES"/*.ncu-rep
  pack
}
envinfo() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.limit --format=csv
  python3 -c "import torch, triton, sys; print(sys.version.split()[0], torch.__version__, triton.__version__, torch.version.cuda, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
}
