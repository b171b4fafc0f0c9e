"""`convdispatch demo`: the shipped defaults end to end, on a GPU or the CPU interpreter.

1. For a problem set (ResNet-50 by default) print what the dispatcher would
   launch on the target GPU (the shipped model for it, else the rules).
2. Run a small network of every family through ``conv2d``/``conv3d`` on this
   machine (CUDA if present, else Triton's interpreter) and check each output
   against torch in float64. Exit status 1 if any output is wrong.
"""

from __future__ import annotations

import argparse
import contextlib
import time


def register(sub) -> None:
    p = sub.add_parser("demo", help="show choices for a network and run every family once",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpu", default="h100", help="target GPU for the choices (default h100)")
    p.add_argument("--problems", default="resnet50", help="problem set to explain")
    p.add_argument("--batch", type=int, default=32, help="batch size of the shown layers")
    p.set_defaults(func=run)


# Small layers of each kind, the chooser picking their family:
# (name, dims, N, C, K, spatial, kernel, stride, pad, groups[, forced candidate])
LAYERS = [
    ("stem 7x7/s2, C=3", 2, 1, 3, 16, (16, 16), (7, 7), 2, 3, 1),
    ("3x3 dense", 2, 2, 32, 32, (8, 8), (3, 3), 1, 1, 1),
    ("3x3 dense, 16-wide rows", 2, 1, 64, 32, (16, 16), (3, 3), 1, 1, 1),
    ("1x1 pointwise", 2, 2, 64, 32, (8, 8), (1, 1), 1, 0, 1),
    ("1x1 stride 2", 2, 2, 64, 32, (8, 8), (1, 1), 2, 0, 1),
    ("grouped 3x3, 4 groups", 2, 2, 64, 64, (6, 6), (3, 3), 1, 1, 4),
    ("grouped 3x3, 64 a group", 2, 1, 128, 128, (5, 5), (3, 3), 1, 1, 2),
    ("grouped 3x3, 4 a group", 2, 1, 32, 32, (16, 16), (3, 3), 1, 1, 8),
    ("depthwise 3x3", 2, 2, 32, 32, (8, 8), (3, 3), 1, 1, 32),
    ("3D depthwise 3x3x3", 3, 1, 16, 16, (4, 6, 6), (3, 3, 3), 1, 1, 16),
    ("grouped 3x3, 2->96 a group", 2, 1, 4, 192, (6, 6), (3, 3), 1, 1, 2),
    ("deep 3x3 on 3x3 map", 2, 1, 256, 64, (3, 3), (3, 3), 1, 1, 1),
    ("3D 3x3x3", 3, 1, 32, 16, (3, 6, 6), (3, 3, 3), 1, 1, 1),
    # The rules take depthwise_span for 16-bit layers of over 2M outputs, too large for
    # the interpreter: forced here (cd.force), and shown as forced.
    ("depthwise 3x3, 24 ch", 2, 2, 24, 24, (8, 8), (3, 3), 1, 1, 24,
     "depthwise_span:BLOCK_M=4;BLOCK_N=128;num_warps=1;num_stages=1"),
    # The rules send stride-1 3x3s to the persistent box kernel, 1x1s to the one-tile TMA
    # GEMM and strided layers to neither: the other two TMA variants, forced.
    ("3x3 stride 2, phase boxes", 2, 1, 64, 32, (16, 16), (3, 3), 2, 1, 1,
     "implicit_gemm_tma:BLOCK_K=64;BLOCK_M=64;BLOCK_N=64;GROUP_M=8;TILE_W=8;num_stages=4;"
     "num_warps=4"),
    ("1x1 pointwise, persistent grid", 2, 2, 64, 32, (8, 8), (1, 1), 1, 0, 1,
     "pointwise_tma_persistent:BLOCK_K=64;BLOCK_M=64;BLOCK_N=64;GROUP_M=8;num_stages=4;"
     "num_warps=4"),
]


def _explain_set(args) -> None:
    from ..data.problems import load_set
    from .explain import explain

    problems = [p for p in load_set(args.problems) if p.geom.n == args.batch]
    if not problems:
        raise ValueError(f"set {args.problems!r} has no layer at batch {args.batch}")
    print(f"Choices for {args.problems} (batch {args.batch}, float16, channels_last) "
          f"on {args.gpu}:")
    for p in problems:
        e = explain(p.geom, gpu=args.gpu)
        model = f" {e.model}" if e.model else ""
        print(f"  {p.layer:28s} {e.candidate.id}  [{e.chooser}{model}]")


def _run_layers() -> bool:
    import torch
    import torch.nn.functional as F

    from . import api, registry, settings
    from .explain import explain

    device = "cuda" if torch.cuda.is_available() else "cpu"
    where = torch.cuda.get_device_name() if device == "cuda" else "CPU, Triton interpreter"
    print(f"\nRunning one layer of each kind on {where}:")
    ok = True
    for name, dims, n, c, k, sp, ks, stride, pad, groups, *forced in LAYERS:
        gen = torch.Generator().manual_seed(len(name))
        x = torch.randn(n, c, *sp, generator=gen)
        w = torch.randn(k, c // groups, *ks, generator=gen) / (c // groups * len(ks)) ** 0.5
        b = torch.randn(k, generator=gen)
        fmt = torch.channels_last if dims == 2 else torch.channels_last_3d
        dtype = torch.float16 if device == "cuda" else torch.float32
        xd = x.to(device, dtype).to(memory_format=fmt)
        wd = w.to(device, dtype).to(memory_format=fmt)  # as after model.to(channels_last)
        bd = b.to(device, dtype)
        fn = api.conv2d if dims == 2 else api.conv3d
        ref_fn = F.conv2d if dims == 2 else F.conv3d
        t0 = time.perf_counter()
        with settings.force(forced[0]) if forced else contextlib.nullcontext():
            out = fn(xd, wd, bd, stride, pad, 1, groups, activation="relu")
        if device == "cuda":
            torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1e3
        ref = F.relu(ref_fn(xd.double().cpu(), wd.double().cpu(), bd.double().cpu(), stride,
                            pad, 1, groups))
        err = float((out.double().cpu() - ref).norm() / ref.norm())
        tol = 1e-2 if dtype == torch.float16 else 2e-3
        good = err < tol
        ok &= good
        fam = (registry.parse_candidate(forced[0]).family if forced
               else explain(xd, wd, bd, stride, pad, 1, groups).candidate.family)
        print(f"  {name:24s} {fam:15s} rel err {err:.1e} "
              f"{'ok' if good else 'WRONG'}  ({ms:.0f} ms first call"
              f"{', forced' if forced else ''})")
    return ok


def run(args) -> int:
    _explain_set(args)
    ok = _run_layers()
    print("\nall outputs match torch" if ok else "\nSOME OUTPUTS ARE WRONG")
    return 0 if ok else 1
