"""End-to-end training check: a small ResNeXt-style network trained with convdispatch's
convolutions (forward, dgrad, wgrad) against the same network on torch's, from the same
initial weights and batches. In bfloat16 (weights, activations and gradients; both sides)
the grouped 3x3s' backward passes are the "backward" direction's choice: the fused kernel
or the two directions' kernels.

    python -m convdispatch.validation.train_check --out DIR [--steps 30] [--device cuda]
        [--dtype float32|bfloat16]

Writes loss.csv (both loss curves), train.md and env.json. The curves match when the
largest relative gap between the two losses stays at the level of float rounding
(TF32 follows ``torch.backends.cudnn.allow_tf32`` on both sides).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import torch
from torch import nn

from ..dispatcher.replace import replace_convs


class Block(nn.Module):
    """ResNeXt bottleneck: 1x1 reduce, grouped 3x3, 1x1 expand, residual."""

    def __init__(self, ch: int, width: int, groups: int, stride: int = 1) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(ch, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, stride, 1, groups=groups, bias=False),
            nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, ch, 1, bias=False), nn.BatchNorm2d(ch))
        self.skip = nn.Identity() if stride == 1 else nn.Sequential(
            nn.Conv2d(ch, ch, 1, stride, bias=False), nn.BatchNorm2d(ch))

    def forward(self, x):
        return torch.relu(self.body(x) + self.skip(x))


def small_resnext(classes: int = 10, width: int = 64) -> nn.Module:
    """Stem 7x7/s2 (C=3), two grouped blocks, a depthwise 3x3, global pool, linear."""
    return nn.Sequential(
        nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
        Block(width, width, groups=8), Block(width, 2 * width, groups=16, stride=2),
        nn.Conv2d(width, width, 3, 1, 1, groups=width), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, classes))


def train(model: nn.Module, batches, steps: int, lr: float) -> tuple[list[float], float]:
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    t0 = time.perf_counter()
    for step in range(steps):
        x, y = batches[step % len(batches)]
        # In float32 whatever the model's dtype: a bfloat16 loss hides gaps below 2**-8.
        loss = nn.functional.cross_entropy(model(x).float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses, time.perf_counter() - t0


def _backward_passes() -> str:
    """The geometries whose backward passes asked ``fused_pair`` (the fused kernel takes
    16-bit only), each with the fused config it ran or the two directions' kernels."""
    from ..dispatcher import fused_pair
    from ..kernels import backward_grouped_flat

    lines = [f"- n={g.n} c={g.c} k={g.k} groups={g.g} {g.h}x{g.w} stride {g.stride[1]} "
             f"{g.dtype}: " + (f"backward_grouped_flat:{cfg}" if cfg is not None
                               else "the dgrad and wgrad choices (backward_pair)")
             for (g, _dev), cfg in fused_pair.CONFIGS.items()
             if backward_grouped_flat.supports(g) is None]
    return "\n".join(lines) or "- none"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    a = ap.parse_args(argv)
    dev = torch.device(a.device)
    dtype = getattr(torch, a.dtype)
    torch.manual_seed(0)
    fmt = torch.channels_last
    ref = small_resnext().to(dev, dtype).to(memory_format=fmt)
    ours = replace_convs(copy.deepcopy(ref))
    gen = torch.Generator().manual_seed(1)
    batches = [(torch.randn(a.batch, 3, a.size, a.size, generator=gen).to(dev, dtype).contiguous(
                    memory_format=fmt),
                torch.randint(0, 10, (a.batch,), generator=gen).to(dev)) for _ in range(4)]
    # One untimed step each compiles kernels and picks cuDNN algorithms.
    train(copy.deepcopy(ref), batches, 1, a.lr)
    train(copy.deepcopy(ours), batches, 1, a.lr)
    ref_loss, ref_s = train(ref, batches, a.steps, a.lr)
    our_loss, our_s = train(ours, batches, a.steps, a.lr)
    gaps = [abs(o - r) / max(abs(r), 1e-12) for o, r in zip(our_loss, ref_loss)]
    passes = _backward_passes()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "loss.csv", "w") as f:
        f.write("step,torch_loss,convdispatch_loss,rel_gap\n")
        for i, (r, o, gp) in enumerate(zip(ref_loss, our_loss, gaps)):
            f.write(f"{i},{r:.8g},{o:.8g},{gp:.3e}\n")
    import triton

    env = dict(device=torch.cuda.get_device_name(dev) if dev.type == "cuda" else str(dev),
               torch=torch.__version__, triton=triton.__version__,
               command="python -m convdispatch.validation.train_check "
                       + " ".join(sys.argv[1:] if argv is None else argv),
               date=time.strftime("%Y-%m-%d %H:%M:%S %Z"), steps=a.steps, batch=a.batch,
               size=a.size, dtype=a.dtype, allow_tf32=torch.backends.cudnn.allow_tf32)
    (out / "env.json").write_text(json.dumps(env, indent=1))
    md = (f"# Training check: small ResNeXt-style network, {a.steps} SGD steps\n\n"
          f"Device: {env['device']}; torch {env['torch']}, triton {env['triton']}; "
          f"{env['date']}. Command: `{env['command']}`\n\n"
          f"{a.dtype}, channels_last, batch {a.batch} of 3x{a.size}x{a.size}, TF32 "
          f"{'on' if env['allow_tf32'] else 'off'} on both sides.\n\n"
          f"| | torch (cuDNN) | convdispatch |\n|---|---|---|\n"
          f"| first loss | {ref_loss[0]:.6f} | {our_loss[0]:.6f} |\n"
          f"| last loss | {ref_loss[-1]:.6f} | {our_loss[-1]:.6f} |\n"
          f"| wall s for {a.steps} steps (eager) | {ref_s:.3f} | {our_s:.3f} |\n\n"
          f"Largest relative loss gap over the run: {max(gaps):.2e} (step "
          f"{gaps.index(max(gaps))}); mean {sum(gaps) / len(gaps):.2e}.\n\n"
          f"Backward passes of convdispatch's grouped layers that the fused kernel could "
          f"take, and what they ran (``fused_pair``):\n\n{passes}\n")
    (out / "train.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
