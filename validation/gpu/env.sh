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
