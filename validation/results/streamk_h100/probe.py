"""Probe of the stream-K kernels on a GPU: where their time goes against the persistent
grid with the same tile (device call 72).

    python validation/results/streamk_h100/probe.py

For a few layers the same config runs as: the persistent family; stream-K as shipped;
stream-K with runs of whole tiles (1 and 2 a program: the same kernel, no partial tile
handed over); stream-K timed eagerly (its flags from the per-stream cache instead of a
zeroed buffer in the graph). Times: the sweep's timer (CUDA graph, L2 flushed, median).
"""

from __future__ import annotations

import dataclasses

import torch
from convdispatch.kernels import streamk
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.geometry import ConvGeometry as G
from convdispatch.validation.inputs import make_inputs, reference, rel_err, torch_conv
from convdispatch.validation.timing import CudaTimer, TimingSettings, candidate_fn

PW = dict(BLOCK_K=64, GROUP_M=8)
CASES = [
    ("resnet50 layer4.1.conv1 n128", G(n=128, c=2048, k=512, h=7, w=7, r=1, s=1),
     "pointwise_tma", Config(BLOCK_M=128, BLOCK_N=128, num_stages=4, num_warps=4, **PW)),
    ("resnet50 layer4.1.conv1 n1", G(n=1, c=2048, k=512, h=7, w=7, r=1, s=1),
     "pointwise_tma", Config(BLOCK_M=64, BLOCK_N=64, num_stages=4, num_warps=4, **PW)),
    ("resnet50 layer3.1.conv1 n32", G(n=32, c=1024, k=256, h=14, w=14, r=1, s=1),
     "pointwise_tma", Config(BLOCK_M=64, BLOCK_N=128, num_stages=4, num_warps=4, **PW)),
    ("resnet50 layer3.1.conv2 n128", G(n=128, c=256, k=256, h=14, w=14, r=3, s=3,
                                       pad=(0, 1, 1)),
     "implicit_gemm_tma", Config(BLOCK_M=128, TILE_W=16, BLOCK_N=128, num_stages=4,
                                 num_warps=4, **PW)),
]


def main() -> None:
    torch.manual_seed(0)
    timer = CudaTimer(TimingSettings(warmup_ms=5, rep_ms=20))
    eager = CudaTimer(TimingSettings(warmup_ms=5, rep_ms=20, cuda_graph=False))
    split = streamk.split
    print("| layer | config | persistent us | stream-K us | whole tiles, 1 a run | "
          "2 a run | stream-K eager | stream-K rel err |")
    print("|---|---|---|---|---|---|---|---|")
    for name, base, fam, cfg in CASES:
        geom = dataclasses.replace(base, dtype="float16")
        x, w, b = make_inputs(geom, "cuda", seed=0)
        out = torch.empty_like(torch_conv(geom, x, w, b))
        row = [name, str(cfg)]
        row.append(timer.time(candidate_fn(Candidate(fam + "_persistent", cfg), x, w, b,
                                           geom, out))[0])
        sk = Candidate(fam + "_streamk", cfg)
        row.append(timer.time(candidate_fn(sk, x, w, b, geom, out))[0])
        err = rel_err(out, reference(geom, x, w, b))
        for per in (1, 2):
            streamk.split = lambda tiles, steps, programs, per=per: (
                steps * per, -(-tiles // per))
            row.append(timer.time(candidate_fn(sk, x, w, b, geom, out))[0])
            streamk.split = split
        row.append(eager.time(candidate_fn(sk, x, w, b, geom, out))[0])
        row.append(f"err {err:.1e}")
        print("| " + " | ".join(f"{v:.1f}" if isinstance(v, float) else str(v)
                                for v in row) + " |", flush=True)
    print("flags raised after all runs:", int(streamk.flags(torch.device("cuda"), 1).sum()))


def ncu_target(case: int) -> None:
    """Run case ``case``'s persistent and stream-K kernels twice each, for ncu to profile."""
    from convdispatch.dispatcher.launch import run_candidate

    _, base, fam, cfg = CASES[case]
    geom = dataclasses.replace(base, dtype="float16")
    x, w, b = make_inputs(geom, "cuda", seed=0)
    out = torch.empty_like(torch_conv(geom, x, w, b))
    for variant in ("_persistent", "_streamk"):
        for _ in range(2):
            run_candidate(Candidate(fam + variant, cfg), x, w, b, geom, out=out)
    torch.cuda.synchronize()


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 2 and sys.argv[1] == "ncu":
        ncu_target(int(sys.argv[2]))
    else:
        main()
