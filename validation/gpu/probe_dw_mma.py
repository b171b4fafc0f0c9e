"""Depthwise wgrad on the tensor cores: a probe against ``wgrad_depthwise_rows``.

    python3 validation/gpu/probe_dw_mma.py OUT.csv [--check-only]

``wgrad_depthwise_rows`` is an FMA kernel: on the H100 it issues an instruction about
every cycle it can (half of them conversions, loads and addresses), so its big layers stop
at 1.3-1.7 TB/s. Here a program owns BC channels and walks output pixel blocks; for a
tap, dW[c, tap] = sum over pixels of dY[p, c] * X_tap[p, c] is the diagonal of the
[BC, BC] product dY^T X_tap, which ``tl.dot`` computes on the tensor cores (BC times the
useful work, but no conversions and no FMAs). The diagonals are taken once, at the end.
Splits go to ``wgrad_gemm``'s fixed-order reduction, as in the family.

For MobileNetV2's batch-32 depthwise layers: the variant's configs checked against torch
(float64 reference), then timed with the family's best swept config (from the sweep CSV)
and cuDNN, as CUDA-graph replays paired like the benchmarks. 2D, stride and dilation
general, channels_last fp16.
"""

from __future__ import annotations

import csv
import sys

import torch
import triton
import triton.language as tl
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher.autograd import torch_grad
from convdispatch.dispatcher.launch import empty_grad, launch_grad
from convdispatch.kernels.base import Candidate, GradCall
from convdispatch.kernels.common import cdiv
from convdispatch.kernels.wgrad_gemm import split_slices

LAYERS = ["features.1.conv.0.0", "features.2.conv.1.0", "features.3.conv.1.0",
          "features.4.conv.1.0", "features.5.conv.1.0", "features.7.conv.1.0",
          "features.8.conv.1.0", "features.12.conv.1.0", "features.14.conv.1.0",
          "features.15.conv.1.0"]
# (BC, ROWS, TILE_W, SPLIT_K, num_warps, num_stages)
CONFIGS = [(bc, rows, tw, sk, wp, st)
           for bc, warps in ((16, (1, 2)), (32, (2, 4))) for wp in warps
           for rows, tw in ((4, 16), (8, 8), (2, 32), (8, 16))
           for sk in (8, 32, 128, 512) for st in (2, 3)]


@triton.jit
def dw_mma_kernel(dy_ptr, x_ptr, ws_ptr, C, H, W, OH, OW, sth, stw, ph, pw, dh, dw,
                  TILES_H, TILES_W, ITEMS, PER_SPLIT,
                  syn, syc, syh, syw, sxn, sxc, sxh, sxw,
                  R: tl.constexpr, S: tl.constexpr, BC: tl.constexpr, ROWS: tl.constexpr,
                  TILE_W: tl.constexpr):
    c0 = tl.program_id(0) * BC
    sl = tl.program_id(1)
    offs_c = c0 + tl.arange(0, BC)
    c_ok = offs_c < C
    p = tl.arange(0, ROWS * TILE_W)
    o = p // TILE_W
    q = p % TILE_W
    accs = ()
    for _t in tl.static_range(R * S):
        accs = accs + (tl.zeros((BC, BC), dtype=tl.float32),)
    first = sl * PER_SPLIT
    end = tl.minimum(first + PER_SPLIT, ITEMS)
    for it in range(first, first + PER_SPLIT):
        live = it < end
        band = it % TILES_H
        rest = it // TILES_H
        ow = (rest % TILES_W) * TILE_W + q
        n = rest // TILES_W
        oh = band * ROWS + o
        ok = (oh < OH) & (ow < OW) & live
        dy = tl.load(dy_ptr + n * syn + (oh * syh + ow * syw)[:, None] + (offs_c * syc)[None, :],
                     mask=ok[:, None] & c_ok[None, :], other=0.0)
        dyt = tl.trans(dy)
        new = ()
        for t in tl.static_range(R * S):
            ih = oh * sth + (t // S) * dh - ph
            iw = ow * stw + (t % S) * dw - pw
            xm = ok & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            xt = tl.load(x_ptr + n * sxn + (ih * sxh + iw * sxw)[:, None]
                         + (offs_c * sxc)[None, :], mask=xm[:, None] & c_ok[None, :], other=0.0)
            new = new + (tl.dot(dyt, xt, accs[t]),)
        accs = new
    eye = tl.arange(0, BC)[:, None] == tl.arange(0, BC)[None, :]
    for t in tl.static_range(R * S):
        d = tl.sum(tl.where(eye, accs[t], 0.0), axis=1)
        # workspace [slices, taps, C] (wgrad_gemm's layout with C/G = 1)
        tl.store(ws_ptr + sl.to(tl.int64) * (R * S * C) + t * C + offs_c, d, mask=c_ok)


def launch_dw_mma(call: GradCall, cfg: tuple) -> None:
    bc, rows, tw, split, warps, stages = cfg
    g = call.geom
    _, oh, ow = g.out_spatial
    tiles_h, tiles_w = cdiv(oh, rows), cdiv(ow, tw)
    items = g.n * tiles_h * tiles_w
    dy, x = call.dy[:, :, 0], call.x[:, :, 0]
    # split 1 still goes through a one-slice workspace (the probe keeps one store path)
    with split_slices(call, max(split, 2), items) as (per_split, ws, slices):
        dw_mma_kernel[(cdiv(g.c, bc), slices)](
            dy, x, ws, g.c, g.h, g.w, oh, ow, g.stride[1], g.stride[2], g.pad[1], g.pad[2],
            g.dilation[1], g.dilation[2], tiles_h, tiles_w, items, per_split,
            *dy.stride(), *x.stride(), R=g.r, S=g.s, BC=bc, ROWS=rows, TILE_W=tw,
            num_warps=warps, num_stages=stages)


def best_rows_config(sweep: str, pid: str) -> str | None:
    best = None
    with open(sweep, newline="") as f:
        for r in csv.DictReader(f):
            if (r["problem_id"] == pid and r["family"] == "wgrad_depthwise_rows"
                    and r["status"] == "ok" and (best is None
                                                 or float(r["latency_us"]) < best[0])):
                best = (float(r["latency_us"]), r["config"])
    return None if best is None else f"wgrad_depthwise_rows:{best[1]}"


def probe_layer(i: int, layer: str, sweep: str, check_only: bool, out) -> None:
    """Check and time every config on one layer, writing a row each."""
    from convdispatch.validation.bench_layers import bench_graph, make_tensors
    from convdispatch.validation.inputs import make_grad_output

    pid = f"mobilenet_v2/{layer}/n32/float16"
    g = problem_by_id(pid).geom
    x, w, _ = make_tensors(g, "cuda", i)
    dy = make_grad_output(g, "cuda", i)
    ref = torch_grad(g, "wgrad", dy.double(), x.double(), w.double())
    dw = empty_grad("wgrad", x, w)
    call = GradCall(dy=dy[:, :, None], x=x[:, :, None], w=w[:, :, None], out=dw[:, :, None],
                    geom=g)
    rows_cand = best_rows_config(sweep, pid)
    rows_us = cudnn_us = float("nan")
    if not check_only:
        rows = Candidate.parse(rows_cand)
        rows_us = bench_graph(lambda: launch_grad(rows, g, dy, x=x, w=w, out=dw), 5) * 1e3
        cudnn_us = bench_graph(lambda: torch_grad(g, "wgrad", dy, x, w), 5) * 1e3
    best = None
    for cfg in CONFIGS:
        bc, rows_n, tw, *_ = cfg
        if tw > 2 * g.out_spatial[2] or rows_n > 2 * g.out_spatial[1]:
            continue
        dw.fill_(float("nan"))
        try:
            launch_dw_mma(call, cfg)
            torch.cuda.synchronize()
        except Exception as e:  # a config that does not compile: say so, go on
            print(f"{layer} {cfg}: {type(e).__name__}: {str(e)[:120]}", flush=True)
            continue
        err = float((dw.double() - ref).norm() / ref.norm())
        us = float("nan")
        if not check_only and err < 1e-2:
            us = bench_graph(lambda cfg=cfg: launch_dw_mma(call, cfg), 5) * 1e3
        out.writerow(dict(problem_id=pid, config=str(cfg), rel_err=err, us=us,
                          rows_us=rows_us, rows_config=rows_cand, cudnn_us=cudnn_us))
        if best is None or us < best[0]:
            best = (us, cfg, err)
    print(f"{layer}: mma best {best[0]:.1f} us {best[1]} (err {best[2]:.1e}); rows "
          f"{rows_us:.1f}; cudnn {cudnn_us:.1f}", flush=True)


def main(argv: list[str]) -> int:
    out_path = argv[0]
    check_only = "--check-only" in argv
    sweep = "data/sweeps/h100/bwd_wgrad.csv"
    fields = ["problem_id", "config", "rel_err", "us", "rows_us", "rows_config", "cudnn_us"]
    with open(out_path, "w", newline="") as f:
        out = csv.DictWriter(f, fields)
        out.writeheader()
        for i, layer in enumerate(LAYERS):
            probe_layer(i, layer, sweep, check_only, out)
            f.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
