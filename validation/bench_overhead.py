"""Host time a cached decision adds to a call, over launching the chosen kernel directly;
and the host time of each gradient a backward pass computes.

Kernel launches are stubbed out on both sides (``launcher._launch``), so what is
left is the host work of each path: ``convdispatch.conv2d`` (argument checks,
signature lookup, replay of the recorded plan, output allocation) against the bare
direct path (allocate the output, run the recorded launches: ``Plan.run``). The
gradient table times ``autograd.gradient`` (cached decision, the family's Python
launcher, dX/dW allocation) with the arguments a real backward pass gave it. Runs on
any machine.

    python -m convdispatch.validation.bench_overhead
"""

from __future__ import annotations

import os
import timeit

os.environ.setdefault("TRITON_INTERPRET", "1")

import convdispatch as cd  # noqa: E402
import torch  # noqa: E402
from convdispatch.dispatcher import api  # noqa: E402
from convdispatch.kernels import launcher  # noqa: E402

CASES = {
    "3x3 dense, bias": dict(x=(1, 32, 8, 8), w=(32, 32, 3, 3), bias=True, padding=1),
    "1x1, residual + relu": dict(x=(1, 64, 8, 8), w=(64, 64, 1, 1), residual=True,
                                 activation="relu"),
    "depthwise 3x3": dict(x=(1, 32, 8, 8), w=(32, 1, 3, 3), padding=1, groups=32),
}


def _per_call_us(fn, number: int = 2000, repeat: int = 7) -> float:
    """Best of ``repeat`` runs: on a shared machine the slower runs measure the neighbours."""
    runs = timeit.repeat(fn, number=number, repeat=repeat)
    return min(runs) / number * 1e6


def measure(name: str, spec: dict) -> tuple[float, float]:
    x = torch.randn(*spec["x"]).to(memory_format=torch.channels_last)
    w = torch.randn(*spec["w"])
    b = torch.randn(spec["w"][0]) if spec.get("bias") else None
    kw = {k: spec[k] for k in ("padding", "groups", "activation") if k in spec}
    res = None
    if spec.get("residual"):
        res = torch.randn(x.shape[0], w.shape[0], *x.shape[2:]).to(
            memory_format=torch.channels_last)
    cd.conv2d(x, w, b, residual=res, **kw)  # decide, compile, record the plan
    plan, shape, fmt, _ = next(reversed(api.PLANS.values()))
    real = launcher._launch
    launcher._launch = lambda *a: None
    try:
        ours = _per_call_us(lambda: cd.conv2d(x, w, b, residual=res, **kw))

        def direct():
            out = torch.empty(shape, dtype=x.dtype, memory_format=fmt)
            if not plan.run({"x": x, "w": w, "out": out, "bias": b, "residual": res},
                            x.device):
                raise RuntimeError("the recorded plan did not take these tensors")

        bare = _per_call_us(direct)
    finally:
        launcher._launch = real
    return ours, bare


def measure_grads(spec: dict) -> dict[str, float]:
    """Host us of each gradient one backward pass of ``spec``'s conv (without its bias and
    epilogue) computes."""
    from convdispatch.dispatcher import autograd

    x = torch.randn(*spec["x"]).to(memory_format=torch.channels_last).requires_grad_()
    w = torch.randn(*spec["w"]).requires_grad_()
    kw = {k: spec[k] for k in ("padding", "groups") if k in spec}
    calls, real_gradient = [], autograd.gradient

    def spy(*args):
        calls.append(args)
        return real_gradient(*args)

    autograd.gradient = spy
    try:
        cd.conv2d(x, w, **kw).sum().backward()  # decide, compile, run once
    finally:
        autograd.gradient = real_gradient
    real = launcher._launch
    launcher._launch = lambda *a: None
    try:
        return {args[1]: _per_call_us(lambda args=args: real_gradient(*args), number=500)
                for args in calls}
    finally:
        launcher._launch = real


def main() -> int:
    cd.clear_cache()
    print("| call | convdispatch.conv2d us | direct launch us | added by the dispatcher us |")
    print("|---|---|---|---|")
    for name, spec in CASES.items():
        ours, bare = measure(name, spec)
        print(f"| {name} | {ours:.1f} | {bare:.1f} | {ours - bare:.1f} |")
    print("\n| backward of | dgrad host us | wgrad host us |")
    print("|---|---|---|")
    for name, spec in CASES.items():  # the conv alone: its bias and epilogue are torch's
        us = measure_grads(spec)
        print(f"| {name.split(',')[0]} | {us['dgrad']:.1f} | {us['wgrad']:.1f} |")
    print(f"\ntorch {torch.__version__}, CPU: {os.cpu_count()} cores; launches stubbed.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
