"""wgrad_staged_tma's time split into its staged copies and the rest, next to cuDNN.

    python3 validation/gpu/probe_staged.py [PROBLEM_ID ...]

For each problem (default: the issue-7 suite's slowest wgrad layers at batch 32) it times
with the sweep's timer (CUDA graph, L2 flushed): the staging copies alone (one launch), the
family's launch for every tile at its fastest split (copies included), and cuDNN's
weight gradient on the same tensors. Prints a markdown table.
"""

from __future__ import annotations

import sys

import torch
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher import registry
from convdispatch.kernels import wgrad_staged_tma as staged
from convdispatch.kernels.device import spec_of
from convdispatch.validation.inputs import make_grad_output, make_inputs, seed_of
from convdispatch.validation.timing import CudaTimer, TimingSettings, grad_fn

DEFAULT = [
    "resnet50/layer3.1.conv2/n32/float16", "resnet50/layer4.1.conv2/n32/float16",
    "resnet50/layer2.1.conv2/n32/float16", "resnet50/layer3.0.conv2/n32/float16",
    "resnet50/layer4.0.downsample.0/n32/float16",
    "resnext50_32x4d/layer3.1.conv2/n32/float16", "resnext50_32x4d/layer4.1.conv2/n32/float16",
    "resnext50_32x4d/layer3.0.conv2/n32/float16",
]


def main(argv: list[str]) -> int:
    timer = CudaTimer(TimingSettings(warmup_ms=5, rep_ms=20))
    fam = registry.family("wgrad_staged_tma")
    dev = spec_of("cuda")
    print("| problem | staged copies us | best staged config | us | cuDNN us | waste |")
    print("|---|---|---|---|---|---|")
    for pid in argv or DEFAULT:
        g = problem_by_id(pid).geom
        seed = seed_of(pid)
        x, w, _ = make_inputs(g, "cuda", seed)
        dy = make_grad_output(g, "cuda", seed)
        out = torch.empty_like(w)
        layout = staged.StagedLayout.of(g)
        x5, dy5 = (t.unsqueeze(2) if g.dims == 2 else t for t in (x, dy))

        def copies(x5=x5, dy5=dy5, layout=layout, g=g):
            staged.stage(x5, dy5, g, layout)

        copies()
        (copy_us, _, _), _ = timer.measure(copies)
        best = (float("inf"), "")
        cands = [c for c in registry.candidates(g, dev, "wgrad") if c.family == fam.name]
        for cand in cands:
            (us, _, _), _ = timer.measure(grad_fn(cand, "wgrad", dy, x, w, g, out))
            best = min(best, (us, str(cand.config)))
        (cudnn_us, _, _), _ = timer.measure(grad_fn(None, "wgrad", dy, x, w, g, out))
        print(f"| {pid} | {copy_us:.1f} | {best[1]} | {best[0]:.1f} | {cudnn_us:.1f} | "
              f"{layout.waste(g):.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    torch.backends.cudnn.benchmark = True
    raise SystemExit(main(sys.argv[1:]))
