"""Four input buffers against two in ``grouped_flat``: three steps' copies in flight while
one is reduced (num_stages=3), against one (num_stages=1, the configs swept so far).

    python3 validation/gpu/probe_flat_buffers.py OUT.csv [DTYPE [TILES]]

For each issue-6 grouped layer, the TILES (default 2) fastest (BLOCK_M, BLOCK_N, num_warps)
tiles of the family in the sweep CSVs (data/sweeps/h100/{train,holdout}.csv), each timed
with 2 and with 4 buffers at every ITEMS of ``FILL_ITEMS`` that gives a distinct grid
(4 buffers: where ITEMS x depth taps is a multiple of 4), the two sides in turn at each
ITEMS. CUDA-graph replays, L2 flushed, median (``bench_layers.bench_graph``); each
(tile, buffers) output checked against torch in float32 once.
"""

from __future__ import annotations

import sys

import torch
import torch.nn.functional as F
from convdispatch.dispatcher import launch as launch_mod
from convdispatch.kernels import grouped_flat
from convdispatch.kernels.base import Candidate, Config
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
from convdispatch.validation.probe_io import fastest_tiles, stream_rows

REP_MS = 5


def layer_rows(p, i: int, tiles: list[tuple[int, int, int]]) -> list[dict]:
    g = p.geom
    x, w, b = make_tensors(g, "cuda", seed=i)
    tconv = F.conv2d if g.dims == 2 else F.conv3d
    ref = tconv(x.float(), w.float(), None if b is None else b.float(), **conv_args(g))
    fam = grouped_flat.GroupedFlatFamily()
    spec = spec_of(torch.device("cuda"))
    tg = trim_dead_taps(g)
    out = torch.empty_like(ref, dtype=x.dtype)
    rows = []
    for bm, bn, wp in tiles:
        def cand(items, stages, bm=bm, bn=bn, wp=wp):
            return Candidate("grouped_flat", Config(BLOCK_M=bm, BLOCK_N=bn, ITEMS=items,
                                                    num_warps=wp, num_stages=stages))

        have = fam.items(tg, cand(2, 1).config)
        errs = {}
        for stages in (1, 3):
            first = 4 if stages == 3 else 2
            if fam.hard_ok(tg, cand(first, stages).config, spec) is not None:
                continue
            try:
                out.fill_(float("nan"))
                launch_mod.launch(cand(first, stages), x, w, b, g, out)
                torch.cuda.synchronize()
                errs[stages] = rel_err(out, ref)
            except Exception as e:  # noqa: BLE001 - a variant that fails is recorded by its absence
                print(f"{p.id} {bm}/{bn}/{wp} stages {stages}: {type(e).__name__}: "
                      f"{str(e)[:300]}", flush=True)
        for items in grouped_flat.FILL_ITEMS:
            if items - 2 >= have:
                break
            for stages, err in errs.items():
                cfg = cand(items, stages).config
                if fam.hard_ok(tg, cfg, spec) is not None:
                    continue
                one = cand(items, stages)
                ms = bench_graph(lambda c=one: launch_mod.launch(c, x, w, b, g, out), REP_MS)
                rows.append(dict(problem_id=p.id, BLOCK_M=bm, BLOCK_N=bn, num_warps=wp,
                                 ITEMS=items, num_stages=stages, us=round(ms * 1e3, 3),
                                 rel_err=err, items=have, packs=fam.packs(tg, cfg),
                                 smem=fam.smem_bytes(tg, cfg)))
        for stages in errs:
            mine = [r for r in rows if (r["BLOCK_M"], r["BLOCK_N"], r["num_warps"],
                                        r["num_stages"]) == (bm, bn, wp, stages)]
            if mine:
                top = min(mine, key=lambda r: r["us"])
                print(f"{p.id} {bm}/{bn}/{wp} stages {stages} err {errs[stages]:.1e}: best "
                      f"ITEMS {top['ITEMS']} {top['us']:.1f} us", flush=True)
    return rows


def main() -> None:
    out = sys.argv[1]
    dtype = sys.argv[2] if len(sys.argv) > 2 else "float16"
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    grouped = [p for p in suite_problems("issue6", dtype) if category(p) == "grouped"]
    fastest = fastest_tiles({p.id for p in grouped}, "grouped_flat", count)
    tiles = {pid: [(c["BLOCK_M"], c["BLOCK_N"], c["num_warps"]) for c, _ in best]
             for pid, best in fastest.items()}
    stream_rows(out, (layer_rows(p, i, tiles.get(p.id, [])) for i, p in enumerate(grouped)))


if __name__ == "__main__":
    main()
