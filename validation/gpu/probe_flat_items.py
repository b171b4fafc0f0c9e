"""How many items a ``grouped_flat`` program should walk: every tile of the family on the
issue-6 suite's grouped layers, timed over a range of ITEMS (items a program), the
declared values (2, 4, 8) among them.

    python3 validation/gpu/probe_flat_items.py OUT.csv [DTYPE]

ITEMS is a run-time argument of the kernel: one compile a tile serves every value but
those Triton specialises (1, and multiples of 16, which compile again). The grid is
(packs, cdiv(items, ITEMS)): ITEMS sets how many programs there are and how evenly they
fill the SMs. Each row also gives what the ITEMS=2 compile needs a program (registers a
thread, shared memory), the programs an SM can hold by them, and the launch's programs.
CUDA-graph replays, L2 flushed, median (``bench_layers.bench_graph``); every tile's
output checked against cuDNN's in float32 once, at ITEMS=2.
"""

from __future__ import annotations

import sys

import torch
import torch.nn.functional as F
from convdispatch.dispatcher import launch as launch_mod
from convdispatch.kernels import grouped_flat, launcher
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.common import cdiv
from convdispatch.kernels.dead_taps import trim_dead_taps
from convdispatch.kernels.device import spec_of
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
ITEMS = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 32)
COMPILED: list = []


def _capturing(kernel, grid, *args, **kwargs):
    """``launcher.launch_kernel`` that keeps what Triton compiled and the grid."""
    COMPILED.append((launcher._launch(kernel, grid, args, kwargs), tuple(grid)))


def resident(compiled, warps: int) -> int:
    """Programs an SM holds by registers (64K, allocated per warp in 256s), shared memory
    (227 KiB usable, 1 KiB reserved a program) and warps (64)."""
    regs = -(-compiled.n_regs * 32 // 256) * 256 * warps
    smem = compiled.metadata.shared + 1024
    return max(0, min(65536 // max(regs, 1), (227 * 1024) // smem, 64 // warps, 32))


def layer_rows(p, i: int, sms: int) -> list[dict]:
    g = p.geom
    x, w, b = make_tensors(g, "cuda", seed=i)
    tconv = F.conv2d if g.dims == 2 else F.conv3d
    ref = tconv(x.float(), w.float(), None if b is None else b.float(), **conv_args(g))
    fam = grouped_flat.GroupedFlatFamily()
    spec = spec_of(torch.device("cuda"))
    tg = trim_dead_taps(g)
    tiles = sorted({(c.config["BLOCK_M"], c.config["BLOCK_N"], c.config["num_warps"])
                    for c in fam.candidates(tg, spec)})
    out = torch.empty_like(ref, dtype=x.dtype)
    rows = []
    for bm, bn, wp in tiles:
        def cand(items, bm=bm, bn=bn, wp=wp):
            return Candidate("grouped_flat", Config(BLOCK_M=bm, BLOCK_N=bn, ITEMS=items,
                                                    num_warps=wp, num_stages=1))

        def run(items):
            launch_mod.launch(cand(items), x, w, b, g, out)

        try:
            COMPILED.clear()
            out.fill_(float("nan"))
            run(2)
            torch.cuda.synchronize()
            err = rel_err(out, ref)
            compiled = COMPILED[-1][0]
            hold = resident(compiled, wp)
        except Exception as e:  # noqa: BLE001 - a tile that fails is recorded by its absence
            print(f"{p.id} {bm}/{bn}/{wp}: {type(e).__name__}: {str(e)[:200]}", flush=True)
            continue
        cfg = cand(2).config
        items_total = fam.items(tg, cfg)
        packs = fam.packs(tg, cfg)
        # The ITEMS that put every program in one wave (the most an SM holds).
        one_wave = cdiv(items_total, max(1, (hold * sms) // packs))
        for items in sorted(set(ITEMS) | {one_wave}):
            if items > items_total:
                continue
            ms = bench_graph(lambda n=items: run(n), REP_MS)
            programs = packs * cdiv(items_total, items)
            rows.append(dict(problem_id=p.id, BLOCK_M=bm, BLOCK_N=bn, num_warps=wp,
                             ITEMS=items, us=round(ms * 1e3, 3), rel_err=err,
                             n_regs=compiled.n_regs, shared=compiled.metadata.shared,
                             resident=hold, items=items_total, packs=packs,
                             programs=programs, waves=round(programs / (hold * sms), 3),
                             one_wave=int(items == one_wave)))
        best = min((r for r in rows if r["BLOCK_M"] == bm and r["BLOCK_N"] == bn
                    and r["num_warps"] == wp), key=lambda r: r["us"])
        declared = min((r for r in rows if r["BLOCK_M"] == bm and r["BLOCK_N"] == bn
                        and r["num_warps"] == wp and r["ITEMS"] in grouped_flat.FLAT_ITEMS),
                       key=lambda r: r["us"], default=None)
        print(f"{p.id} {bm}/{bn}/{wp} regs {compiled.n_regs} smem {compiled.metadata.shared} "
              f"hold {hold} items {items_total} packs {packs} err {err:.1e}: best ITEMS "
              f"{best['ITEMS']} {best['us']:.1f} us; declared best "
              f"{declared['ITEMS'] if declared else '-'} "
              f"{declared['us'] if declared else float('nan'):.1f} us", flush=True)
    return rows


def main() -> None:
    out = sys.argv[1]
    dtype = sys.argv[2] if len(sys.argv) > 2 else "float16"
    sms = spec_of(torch.device("cuda")).sm_count
    grouped_flat.launch_kernel = _capturing
    grouped = [p for p in suite_problems("issue6", dtype) if category(p) == "grouped"]
    stream_rows(out, (layer_rows(p, i, sms) for i, p in enumerate(grouped)))


if __name__ == "__main__":
    main()
