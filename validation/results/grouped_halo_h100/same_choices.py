"""Do the retrained forward and dgrad models pick what the benchmarked ones picked? (CPU)

    python validation/results/grouped_halo_h100/same_choices.py > same_choices.md

Feature schema v18 added the wgrad family ``wgrad_grouped_halo``, so the forward and
dgrad models were retrained on unchanged rows. This decides every layer of the issue-6
suite (float16 and bfloat16) and the backward suite's dgrad half with the shipped models
for the H100 and compares each choice with the one the last benchmarks recorded: call
110 (forward model ae5196d427cc, ``../depthwise_schedule_h100/call110/``) and call 121
(dgrad model 9fe17f0e2e5d, ``../phase_streams_h100/call121/``). Where all agree, those
results stand for the shipped models.
"""

from __future__ import annotations

import json
from pathlib import Path

from convdispatch.kernels.device import lookup
from convdispatch.validation.same_choices import differing

HERE = Path(__file__).parent
RES = HERE.parent
RECORDED = [
    ("issue6 float16", "forward", RES / "depthwise_schedule_h100/call110/issue6_fp16/bench.csv.gz"),
    ("issue6 bfloat16", "forward",
     RES / "depthwise_schedule_h100/call110/issue6_bf16/bench.csv.gz"),
    ("backward dgrad", "dgrad", RES / "phase_streams_h100/call121/bwd_dgrad/bench.csv"),
]


def main() -> int:
    spec = lookup("NVIDIA H100 80GB HBM3")
    models = HERE.parents[2] / "models" / "h100"
    ids = {d: json.loads((models / sub / "meta.json").read_text())["identity"]
           for d, sub in (("forward", "."), ("dgrad", "dgrad"))}
    print(f"Shipped models: forward {ids['forward']}, dgrad {ids['dgrad']} (schema v18), "
          "device NVIDIA H100 80GB HBM3. Command: "
          "`python validation/results/grouped_halo_h100/same_choices.py`.\n")
    print("| suite | direction | layers | same choice as recorded | differing |")
    print("|---|---|---|---|---|")
    for name, direction, path in RECORDED:
        n, diff = differing(path, spec)
        differ = [f"{pid.split(' ')[0]} ({chosen} -> {got})" for pid, chosen, got in diff]
        print(f"| {name} | {direction} | {n} | {n - len(differ)} | "
              f"{'; '.join(differ) or '-'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
