"""Where an eager training step of train_check's network spends its time: wall per step
(torch's and ours), the GPU time of each step's kernels (torch.profiler), and the host
functions under cProfile; then ours again with the launcher's direct replay
(``launcher.FAST_REPLAY``), the plans of TMA launches (``launcher.DESCRIPTOR_PLANS``) and
the overlapped gradients (``autograd.OVERLAP``) switched, the settings and torch timed in
interleaved rounds (median and best of ROUNDS).

    python3 validation/gpu/probe_step_host.py OUT_DIR [STEPS]
"""

from __future__ import annotations

import copy
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

import torch
from convdispatch.dispatcher import autograd, clear_cache
from convdispatch.dispatcher.replace import replace_convs
from convdispatch.kernels import launcher
from convdispatch.validation.train_check import small_resnext
from torch import nn

ROUNDS = 5


def step_fn(model, batches):
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    state = {"i": 0}

    def step():
        x, y = batches[state["i"] % len(batches)]
        state["i"] += 1
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    return step


def wall(step, n: int) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n


def per_call(dev) -> list[str]:
    """Host time of one repeat call (a small fp16 3x3 layer, its GPU work a few us, so the
    host sets the pace): forward ``conv2d`` and one backward's ``gradients``, with the
    direct replay on and off (best of 5 runs of 300 calls)."""
    import convdispatch as cd
    from convdispatch.kernels.geometry import ConvGeometry

    g = ConvGeometry(n=1, c=64, k=64, h=14, w=14, r=3, s=3, pad=(0, 1, 1),
                     layout="channels_last")
    x = torch.randn(1, 64, 14, 14, device=dev, dtype=torch.float16).contiguous(
        memory_format=torch.channels_last)
    w = torch.randn(64, 64, 3, 3, device=dev, dtype=torch.float16).contiguous(
        memory_format=torch.channels_last)
    dy = torch.randn_like(x)
    calls = {"conv2d forward": lambda: cd.conv2d(x, w, padding=1),
             "gradients (dX, dW)": lambda: autograd.gradients(g, dy, x, w)}
    out = []
    for name, fn in calls.items():
        got = {}
        for fast in (True, False, True, False):
            launcher.FAST_REPLAY = fast
            for _ in range(20):
                fn()
            best = min(wall(fn, 300) for _ in range(5))
            got[fast] = min(got.get(fast, best), best)
        launcher.FAST_REPLAY = True
        out.append(f"{name}: {got[True] * 1e6:.1f} us a call with the direct replay, "
                   f"{got[False] * 1e6:.1f} us through Triton's launch")
    return out


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    dev = torch.device("cuda")
    torch.manual_seed(0)
    fmt = torch.channels_last
    ref = small_resnext().to(dev).to(memory_format=fmt)
    ours = replace_convs(copy.deepcopy(ref))
    gen = torch.Generator().manual_seed(1)
    batches = [(torch.randn(32, 3, 64, 64, generator=gen).to(dev).contiguous(memory_format=fmt),
                torch.randint(0, 10, (32,), generator=gen).to(dev)) for _ in range(4)]
    lines = []
    for name, model in (("torch", ref), ("convdispatch", ours)):
        step = step_fn(model, batches)
        for _ in range(3):
            step()
        per = wall(step, steps)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                step()
            torch.cuda.synchronize()
        gpu_us = sum(e.self_device_time_total for e in prof.key_averages()) / 5
        lines.append(f"{name}: wall {per * 1e3:.2f} ms a step, kernels {gpu_us / 1e3:.2f} ms a "
                     "step (profiler)")
        table = prof.key_averages().table(sort_by="self_device_time_total", row_limit=40)
        (out / f"profile_{name}.txt").write_text(table)
        if name == "convdispatch":
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(steps):
                step()
            torch.cuda.synchronize()
            pr.disable()
            s = io.StringIO()
            pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(60)
            s.write("\n\n")
            pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(40)
            (out / "cprofile.txt").write_text(s.getvalue())
    lines += per_call(dev)
    settings = {"torch": None,
                "default (direct replay, descriptor plans, overlap in graphs)":
                    (True, True, "graphs"),
                "no descriptor plans": (True, False, "graphs"),
                "Triton's launch": (False, True, "graphs"),
                "overlap always": (True, True, "always")}
    steps_of = {name: step_fn(ref if how is None else ours, batches)
                for name, how in settings.items()}
    times: dict[str, list[float]] = {name: [] for name in settings}
    for _ in range(ROUNDS):
        for name, how in settings.items():
            if how is not None:
                launcher.FAST_REPLAY, launcher.DESCRIPTOR_PLANS, autograd.OVERLAP = how
                clear_cache()  # plans recorded under this setting
            for _ in range(2):
                steps_of[name]()
            times[name].append(wall(steps_of[name], steps))
    launcher.FAST_REPLAY, launcher.DESCRIPTOR_PLANS, autograd.OVERLAP = True, True, "graphs"
    clear_cache()
    for name, got in times.items():
        lines.append(f"{name}: median {statistics.median(got) * 1e3:.2f} ms a step, best "
                     f"{min(got) * 1e3:.2f} ({ROUNDS} interleaved rounds of {steps})")
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
