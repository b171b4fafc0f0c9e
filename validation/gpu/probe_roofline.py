"""How close the depthwise layers' gradients are to what memory allows (H100 probe).

    python3 validation/gpu/probe_roofline.py [PROBLEM_ID ...]

For each problem (default: MobileNetV2's depthwise layers at batch 32, fp16) it times
with the sweep's timer (CUDA graph, L2 flushed, median): a copy of X and of dY
(``clone``: what moving those bytes costs at this size, launch included), and cuDNN's
forward, dgrad and wgrad on the same tensors. Prints a markdown table with the bytes a
direction must move (read + write) and the copy's rate.
"""

from __future__ import annotations

import sys

import torch
from convdispatch.data.problems import problem_by_id
from convdispatch.validation.inputs import make_grad_output, make_inputs, seed_of, torch_conv
from convdispatch.validation.timing import CudaTimer, TimingSettings, grad_fn

DEFAULT = [f"mobilenet_v2/features.{i}/n32/float16" for i in (
    "1.conv.0.0", "2.conv.1.0", "3.conv.1.0", "4.conv.1.0", "5.conv.1.0", "7.conv.1.0",
    "8.conv.1.0", "12.conv.1.0", "14.conv.1.0", "15.conv.1.0")]


def main(argv: list[str]) -> int:
    timer = CudaTimer(TimingSettings(warmup_ms=5, rep_ms=20))
    print("| problem | X MB | dY MB | clone X us | clone X GB/s | clone dY us | "
          "cuDNN fwd us | cuDNN dgrad us | cuDNN wgrad us |")
    print("|---|---|---|---|---|---|---|---|---|")
    for pid in argv or DEFAULT:
        g = problem_by_id(pid).geom
        x, w, _ = make_inputs(g, "cuda", seed_of(pid))
        dy = make_grad_output(g, "cuda", seed_of(pid))
        mb_x, mb_y = (t.numel() * t.element_size() / 1e6 for t in (x, dy))
        fns = {"cx": lambda x=x: x.clone(memory_format=torch.channels_last),
               "cy": lambda dy=dy: dy.clone(memory_format=torch.channels_last),
               "fwd": lambda g=g, x=x, w=w: torch_conv(g, x, w, None),
               "dgrad": grad_fn(None, "dgrad", dy, x, w, g, x),
               "wgrad": grad_fn(None, "wgrad", dy, x, w, g, w)}
        us = {}
        for name, fn in fns.items():
            fn()
            us[name] = timer.measure(fn)[0][0]
        print(f"| {pid} | {mb_x:.1f} | {mb_y:.1f} | {us['cx']:.1f} | "
              f"{2 * mb_x * 1e3 / us['cx']:.0f} | {us['cy']:.1f} | {us['fwd']:.1f} | "
              f"{us['dgrad']:.1f} | {us['wgrad']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    torch.backends.cudnn.benchmark = True
    raise SystemExit(main(sys.argv[1:]))
