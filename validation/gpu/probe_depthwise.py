"""The depthwise families' swept configs timed again with this checkout's kernels.

    python3 validation/gpu/probe_depthwise.py [TOP]

For MobileNetV2's depthwise layers at batch 32 (fp16) and each direction, the TOP
(default 3) fastest configs of each family named below in the committed sweep CSVs are
timed with the sweep's timer and settings (CUDA graph, L2 flushed, warmup 2 ms, rep
5 ms). Prints a markdown table: the swept time, the time now, and cuDNN's now.

(In call 105 the wgrad rows were also timed at num_stages 2 and 3 of a pipelined item
loop that did not pay (6-22% slower on seven layers, within 1% on three) and was
dropped; see validation/results/depthwise_schedule_h100/README.md.)
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict

import torch
from convdispatch.data.problems import problem_by_id
from convdispatch.kernels.base import Candidate
from convdispatch.validation.inputs import make_grad_output, make_inputs, seed_of
from convdispatch.validation.timing import (
    CudaTimer,
    TimingSettings,
    candidate_fn,
    cudnn_fn,
    grad_fn,
)

LAYERS = ["1.conv.0.0", "2.conv.1.0", "3.conv.1.0", "4.conv.1.0", "5.conv.1.0", "7.conv.1.0",
          "8.conv.1.0", "12.conv.1.0", "14.conv.1.0", "15.conv.1.0"]
FAMILIES = {"forward": ("train.csv", ("depthwise_span",)),
            "dgrad": ("bwd_dgrad.csv", ("dgrad_depthwise_span", "dgrad_depthwise")),
            "wgrad": ("bwd_wgrad.csv", ("wgrad_depthwise_rows",))}


def swept(csv_name: str, families: tuple[str, ...], top: int) -> dict:
    """{(problem, family): [(us, config), ...]} the TOP fastest ok rows."""
    rows = defaultdict(list)
    with open(f"data/sweeps/h100/{csv_name}") as f:
        for r in csv.DictReader(f):
            if r["family"] in families and r["status"] == "ok" and "/n32/float16" in \
                    r["problem_id"] and r["problem_id"].startswith("mobilenet_v2/"):
                rows[(r["problem_id"], r["family"])].append((float(r["latency_us"]),
                                                             r["config"]))
    return {k: sorted(v)[:top] for k, v in rows.items()}


def main(argv: list[str]) -> int:
    top = int(argv[0]) if argv else 3
    timer = CudaTimer(TimingSettings(warmup_ms=2, rep_ms=5))
    print("| direction | layer | family | config | swept us | now us | cuDNN now us |")
    print("|---|---|---|---|---|---|---|")
    for direction, (csv_name, families) in FAMILIES.items():
        best = swept(csv_name, families, top)
        for layer in LAYERS:
            pid = f"mobilenet_v2/features.{layer}/n32/float16"
            g = problem_by_id(pid).geom
            x, w, _ = make_inputs(g, "cuda", seed_of(pid))
            dy = make_grad_output(g, "cuda", seed_of(pid))
            if direction == "forward":
                out = torch.empty_like(dy)
                ref = cudnn_fn(g, x, w, None)
            else:
                out = torch.empty_like(x if direction == "dgrad" else w)
                ref = grad_fn(None, direction, dy, x, w, g, out)
            ref()
            cudnn_us = timer.measure(ref)[0][0]
            for fam in families:
                for us, cfg in best.get((pid, fam), []):
                    cand = Candidate.parse(f"{fam}:{cfg}")
                    try:
                        if direction == "forward":
                            fn = candidate_fn(cand, x, w, None, g, out)
                        else:
                            fn = grad_fn(cand, direction, dy, x, w, g, out)
                        now = f"{timer.measure(fn)[0][0]:.1f}"
                    except Exception as e:  # noqa: BLE001 - a probe reports and goes on
                        now = f"error {type(e).__name__}: {str(e)[:80]}"
                    print(f"| {direction} | {layer} | {fam} | {cfg} | {us:.1f} | {now} | "
                          f"{cudnn_us:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    torch.backends.cudnn.benchmark = True
    raise SystemExit(main(sys.argv[1:]))
