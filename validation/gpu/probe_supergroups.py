"""Grouped layers as denser convolutions: would block-diagonal super-groups pay?

    python3 validation/gpu/probe_supergroups.py OUT.csv [DTYPE]

For each grouped layer of the issue-6 suite and P whole groups a super-group (P * C/G
input channels of 32 to 128), the filter is made block-diagonal over each super-group
(zeros between its groups: the same result, P times the multiply-adds), and timed as:
- ``cudnn_super``: cuDNN on the conv of G / P groups;
- ``ours_super``: the dispatcher (shipped model) on it;
- ``ours_split``: G / P dense convs of P * C/G channels each, one a super-group, on
  channels_last copies of their input slices made before timing (the dispatcher picks
  the dense kernels, TMA ones where they apply): what one kernel walking super-groups
  as a grid axis could at best do, less its launches.
Against ``cudnn`` and ``ours`` on the layer as it is. CUDA-graph replays, L2 flushed,
median (``bench_layers.bench_graph``); every output checked against cuDNN's.
"""

from __future__ import annotations

import sys

import torch
import torch.nn.functional as F
from convdispatch import conv2d, conv3d
from convdispatch.validation.bench_layers import (
    bench_graph,
    category,
    conv_args,
    make_tensors,
    rel_err,
    suite_problems,
)
from convdispatch.validation.probe_io import stream_rows

REP_MS = 5


def block_diagonal(w: torch.Tensor, groups: int, per: int) -> torch.Tensor:
    """[K, P * C/G, taps...]: each output channel's group filter at its group's place in
    its super-group of ``per`` groups, zeros elsewhere."""
    k, cg = w.shape[:2]
    kg = k // groups
    taps = w.shape[2:]
    src = w.reshape(groups // per, per, kg, cg, *taps)
    out = torch.zeros(groups // per, per, kg, per, cg, *taps, dtype=w.dtype, device=w.device)
    for p in range(per):
        out[:, p, :, p] = src[:, p]
    fmt = torch.channels_last if len(taps) == 2 else torch.channels_last_3d
    return out.reshape(k, per * cg, *taps).contiguous(memory_format=fmt)


def measure(p, i: int) -> list[dict]:
    g = p.geom
    x, w, b = make_tensors(g, "cuda", seed=i)
    kw = conv_args(g)
    tconv = F.conv2d if g.dims == 2 else F.conv3d
    ours = conv2d if g.dims == 2 else conv3d
    fmt = torch.channels_last if g.dims == 2 else torch.channels_last_3d
    ref = tconv(x.float(), w.float(), None if b is None else b.float(), **kw)
    base = {"problem_id": p.id, "category": category(p), "groups": g.g, "cg": g.cg}
    ours(x, w, b, **kw)
    base["cudnn_us"] = bench_graph(lambda: tconv(x, w, b, **kw), REP_MS) * 1e3
    base["ours_us"] = bench_graph(lambda: ours(x, w, b, **kw), REP_MS) * 1e3
    rows = []
    for per in (2, 4, 8, 16, 32):
        if g.g % per or not 32 <= per * g.cg <= 128:
            continue
        wd = block_diagonal(w, g.g, per)
        sup = dict(kw, groups=g.g // per)
        row = dict(base, per=per, flops_factor=per)
        errs = [rel_err(tconv(x, wd, b, **sup), ref), rel_err(ours(x, wd, b, **sup), ref)]
        row["cudnn_super_us"] = bench_graph(lambda wd=wd, sup=sup: tconv(x, wd, b, **sup),
                                            REP_MS) * 1e3
        row["ours_super_us"] = bench_graph(lambda wd=wd, sup=sup: ours(x, wd, b, **sup),
                                           REP_MS) * 1e3
        c = per * g.cg
        kc = per * g.kg
        xs = [x[:, s * c:(s + 1) * c].contiguous(memory_format=fmt) for s in range(g.g // per)]
        ws = [wd[s * kc:(s + 1) * kc] for s in range(g.g // per)]
        bs = [None if b is None else b[s * kc:(s + 1) * kc] for s in range(g.g // per)]
        dense = dict(kw, groups=1)

        def split(xs=xs, ws=ws, bs=bs, dense=dense):
            return [ours(xi, wi, bi, **dense) for xi, wi, bi in zip(xs, ws, bs)]

        errs.append(rel_err(torch.cat(split(), dim=1), ref))
        row["ours_split_us"] = bench_graph(split, REP_MS) * 1e3
        row["max_rel_err"] = max(errs)
        rows.append({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()})
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    out = sys.argv[1]
    dtype = sys.argv[2] if len(sys.argv) > 2 else "float16"
    problems = [p for p in suite_problems("issue6", dtype) if category(p) == "grouped"]
    stream_rows(out, (measure(p, i) for i, p in enumerate(problems)))


if __name__ == "__main__":
    main()
