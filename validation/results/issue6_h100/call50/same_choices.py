"""Does the shipped forward model pick what call 50's model picked? (CPU only)

    python validation/results/issue6_h100/call50/same_choices.py > same_choices.md

The forward model was retrained on the same forward rows when gradient families were
added (feature schema v13, v14). This decides every layer of the issue-6 and issue-2
suites (fp16) with the shipped model for the H100 and compares each choice with the
one call 50's benchmarks recorded (``bench.csv`` here, model a41fd4888219, and
``../../issue7_h100/call50/issue2_model/bench.csv``). Where all agree, the committed
forward results stand for the shipped model. ``same_choices.md`` is its output for
f371113d9e68 (schema v14); schema v15's model 7ec7c4a4ffb7 was benchmarked itself in
call 63 (``../bench.md``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from convdispatch.dispatcher import decide
from convdispatch.kernels.device import lookup
from convdispatch.validation.bench_layers import suite_problems

HERE = Path(__file__).parent
RECORDED = {"issue6": HERE / "bench.csv",
            "issue2": HERE.parents[1] / "issue7_h100" / "call50" / "issue2_model" / "bench.csv"}


def main() -> int:
    spec = lookup("NVIDIA H100 80GB HBM3")
    meta = json.loads((HERE.parents[3] / "models" / "h100" / "meta.json").read_text())
    print(f"Shipped forward model {meta['identity']} (schema v{meta['schema_version']}), "
          "device NVIDIA H100 80GB HBM3. Command: "
          "`python validation/results/issue6_h100/call50/same_choices.py`.\n")
    print("| suite | layers | same choice as call 50 | differing |")
    print("|---|---|---|---|")
    for suite, path in RECORDED.items():
        recorded = pd.read_csv(path).set_index("problem_id")["chosen"]
        probs = suite_problems(suite, "float16")
        differ = [p.id for p in probs if decide(p.geom, spec).candidate.id != recorded[p.id]]
        print(f"| {suite} | {len(probs)} | {len(probs) - len(differ)} | "
              f"{', '.join(differ) or '-'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
